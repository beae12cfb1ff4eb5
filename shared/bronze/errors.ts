import { InletError } from '../kernel/errors.ts';

/** `failOnNewColumns`: the table stops at this version until the schema or the mode is changed. */
export class NewColumnsError extends InletError {
  constructor(
    readonly table: string,
    readonly manifestVersion: number,
    readonly columns: readonly string[],
  ) {
    super(
      `bronze table ${table}: manifest version ${manifestVersion} has new columns ${columns.join(', ')} and evolution is failOnNewColumns; add them with schemaHints or change the mode`,
      { retryable: false },
    );
    this.name = 'NewColumnsError';
  }
}

/**
 * The Delta table at the sink's location cannot take this sink's appends (its protocol, partitioning or
 * constraints): the table stops, loudly, rather than write what its readers would misread.
 */
export class UnwritableTableError extends InletError {
  constructor(
    readonly table: string,
    readonly location: string,
    readonly problems: readonly string[],
  ) {
    super(
      `bronze table ${table}: the Delta table at ${location} cannot be appended to by the sink: ${problems.join('; ')}`,
      { retryable: false },
    );
    this.name = 'UnwritableTableError';
  }
}

/**
 * The Delta table's protocol needs a reader feature this code does not implement (deletion vectors, column
 * mapping...): counting or reading it as if it had none would be wrong, so it is refused.
 */
export class UnreadableTableError extends InletError {
  constructor(
    readonly table: string,
    readonly problems: readonly string[],
  ) {
    super(`bronze table ${table}: the Delta table cannot be read here: ${problems.join('; ')}`, {
      retryable: false,
    });
    this.name = 'UnreadableTableError';
  }
}

/**
 * The Delta log at the table's location holds less than the sink's cursor says it wrote: the `location` was
 * changed (docs/bronze.md "Moving a table"), or the table was deleted. Writing on would commit version N of a
 * manifest into a log without its first N-1 (an unreadable table, or a silently short one), so it stops.
 */
export class SinkTableMismatchError extends InletError {
  constructor(
    readonly table: string,
    readonly location: string,
    cursor: { readonly manifestVersion: number; readonly filesDone: number; readonly location?: string },
    found: { readonly manifestVersion: number; readonly filesDone: number },
  ) {
    super(
      `bronze table ${table}: the sink's cursor says manifest version ${cursor.manifestVersion}` +
        `${cursor.filesDone > 0 ? ` (+${cursor.filesDone} files of the next)` : ''} is written` +
        `${cursor.location && cursor.location !== location ? ` to ${cursor.location}` : ''}, but the Delta log at ${location} ` +
        `holds only up to ${found.manifestVersion}${found.filesDone > 0 ? ` (+${found.filesDone} files)` : ''}; ` +
        'copy the table to the new location, or reset the sink cursor to rebuild it (docs/bronze.md "Moving a table")',
      { retryable: false },
    );
    this.name = 'SinkTableMismatchError';
  }
}

/** Where in a Delta table's log something was read: a commit's line, or a checkpoint's row. */
export interface LogPlace {
  /** The bronze table, when the reader knows which. */
  readonly table?: string;
  /** Unknown to a caller that parses a commit's text alone. */
  readonly version?: number;
  /** 1-based line of the commit `_delta_log/<version>.json`. */
  readonly line?: number;
  /** A checkpoint file of `version`, and the 1-based row in it. */
  readonly checkpoint?: { readonly file: string; readonly row: number };
}

/**
 * A log entry or checkpoint row that is not what PROTOCOL.md says an action is (not JSON, or a known action
 * with a field missing or of another type). Not retryable: S3 serves the same bytes again. A checkpoint that
 * holds one is unreadable, and the log is replayed without it.
 */
export class InvalidDeltaLogError extends InletError {
  constructor(
    readonly place: LogPlace,
    reason: string,
    cause?: unknown,
  ) {
    const at = place.checkpoint
      ? `checkpoint ${place.checkpoint.file}, row ${place.checkpoint.row}`
      : `_delta_log version ${place.version ?? '(unknown)'}${place.line === undefined ? '' : `, line ${place.line}`}`;
    super(`${place.table === undefined ? 'Delta table' : `bronze table ${place.table}`}: ${at}: ${reason}`, {
      retryable: false,
      cause,
    });
    this.name = 'InvalidDeltaLogError';
  }
}

/** A `schemaHints` type that is not Spark DDL for a type a bronze column can hold (hint-types.ts). */
export class HintTypeError extends InletError {
  constructor(
    readonly text: string,
    readonly problem: string,
  ) {
    super(`schemaHints type '${text}': ${problem}`, { retryable: false });
    this.name = 'HintTypeError';
  }
}
