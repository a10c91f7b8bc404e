import { serviceConformance } from '@apphost/testing';
import { lifecycleStoreService } from './service';

serviceConformance(lifecycleStoreService, 'apps/lifecycle-store/src/main.ts');
