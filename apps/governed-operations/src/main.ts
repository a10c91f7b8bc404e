import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { governedOperationsService } from './service';

void runStandalone(governedOperationsService);
