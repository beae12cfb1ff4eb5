import { InletError } from '../errors.ts';

/**
 * A SEALED batch's staged list is gone. The list is deleted only after its batch is COMMITTED, so this is
 * an invariant break (a manual delete, a lifecycle rule on `_staging/`), not an unknown outcome: retrying
 * cannot bring it back, and the batch's files are acknowledged, so an operator must look.
 */
export class StagedListMissingError extends InletError {
  constructor(readonly key: string) {
    super(`staged list ${key} is missing`, { retryable: false });
    this.name = 'StagedListMissingError';
  }
}

/**
 * The manifest bucket already holds the version the ledger would reserve next, written by someone else:
 * the ledger was re-created or restored to an earlier point, or two stacks share a manifest prefix.
 * Committing would fork the table, so the committer refuses until an operator fixes the setup.
 */
export class ManifestAheadOfLedgerError extends InletError {
  constructor(
    readonly table: string,
    readonly head: number,
    readonly foundBatchIds: readonly string[],
  ) {
    super(
      `manifest bucket already has versions of table ${table} beyond the ledger's head (head ${head}, ` +
        `manifest v${head + 1} holds batch ${foundBatchIds.join(',') || '?'}); restore the ledger, or use a ` +
        'new table name / manifest prefix',
      { retryable: false },
    );
    this.name = 'ManifestAheadOfLedgerError';
  }
}
