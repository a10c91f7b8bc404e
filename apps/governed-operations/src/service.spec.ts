import { serviceConformance } from '@apphost/testing';
import { governedOperationsService } from './service';

serviceConformance(governedOperationsService, 'apps/governed-operations/src/main.ts');
