import { serviceConformance } from '@apphost/testing';
import { bindingRegistryService } from './service';

serviceConformance(bindingRegistryService, 'apps/binding-registry/src/main.ts');
