import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'apphost:public';

/** Marks a controller or route as reachable without authentication (probes, metrics, the OpenAPI document). */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);
