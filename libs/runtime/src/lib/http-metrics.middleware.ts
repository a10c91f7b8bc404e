import type { NextFunction, Request, Response } from 'express';
import type { ServiceMetrics } from './metrics';

/** Counts every HTTP request by its route pattern (not the raw path, which would explode label cardinality). */
export function httpMetricsMiddleware(metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      metrics.observeHttp(req.method, route, res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}
