import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { sealedResultStoreService } from './service';

void runStandalone(sealedResultStoreService);
