import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { catalogPolicyService } from './service';

void runStandalone(catalogPolicyService);
