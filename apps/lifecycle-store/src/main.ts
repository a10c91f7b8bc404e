import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { lifecycleStoreService } from './service';

void runStandalone(lifecycleStoreService);
