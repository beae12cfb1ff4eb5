import { Logger } from '@aws-lambda-powertools/logger';
import type { Log } from '../log.ts';

/** The Log port over Powertools Logger (structured JSON lines, CloudWatch Logs). */
export function powertoolsLog(serviceName: string): Log {
  const logger = new Logger({ serviceName });
  return {
    debug: (message, extra) => logger.debug(message, extra ?? {}),
    info: (message, extra) => logger.info(message, extra ?? {}),
    warn: (message, extra) => logger.warn(message, extra ?? {}),
    error: (message, extra) => logger.error(message, extra ?? {}),
  };
}
