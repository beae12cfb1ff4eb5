import { InletError } from '../errors.ts';

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

/** The Delta version this sink must write holds someone else's commit: never overwrite it, alarm. */
export class DeltaCommitConflictError extends InletError {
  constructor(
    readonly table: string,
    readonly deltaVersion: number,
    found: number | undefined,
  ) {
    super(
      `bronze table ${table}: Delta version ${deltaVersion} exists and is not ours (txn manifest version ${found ?? 'none'})`,
      { retryable: false },
    );
    this.name = 'DeltaCommitConflictError';
  }
}
