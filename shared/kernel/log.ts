/** The part of Powertools Logger the use cases need; tests pass a silent or recording one. */
export interface Log {
  debug(message: string, extra?: Record<string, unknown>): void;
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
