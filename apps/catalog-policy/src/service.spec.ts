import { serviceConformance } from '@apphost/testing';
import { catalogPolicyService } from './service';

serviceConformance(catalogPolicyService, 'apps/catalog-policy/src/main.ts');
