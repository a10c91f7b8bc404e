import 'reflect-metadata';
import { runStandalone } from '@apphost/runtime';
import { gatewayService } from './service';

void runStandalone(gatewayService);
