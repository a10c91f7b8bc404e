import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { bindingRegistryService } from './service';

void runStandalone(bindingRegistryService);
