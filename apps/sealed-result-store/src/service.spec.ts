import { serviceConformance } from '@apphost/testing';
import { sealedResultStoreService } from './service';

serviceConformance(sealedResultStoreService, 'apps/sealed-result-store/src/main.ts');
