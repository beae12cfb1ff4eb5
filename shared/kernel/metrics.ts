/** Metric names, one place, so the dashboard and alarms (infra/) use the same strings. */
export const METRIC = {
  filesClaimed: 'FilesClaimed',
  duplicates: 'DuplicatesDropped',
  takeovers: 'ClaimTakeovers',
  busy: 'ClaimsBusy',
  claimErrors: 'ClaimErrors',
  /** Claims refused for load after the in-invocation retries: their messages back off (ChangeMessageVisibility). */
  throttled: 'ClaimsThrottled',
  fenced: 'BatchesFenced',
  quarantined: 'EventsQuarantined',
  ignored: 'EventsIgnored',
  skipped: 'FilesSkipped',
  batchSize: 'BatchSize',
  filesCommitted: 'FilesCommitted',
  versionsCommitted: 'VersionsCommitted',
  commitLatency: 'CommitLatency',
  ingestionLag: 'IngestionLag',
  commitErrors: 'CommitErrors',
  staleBatches: 'StaleBatchesResent',
  stalePending: 'StaleVersionsResent',
  backfillListed: 'BackfillObjectsListed',
  backfillEnqueued: 'BackfillFilesEnqueued',
  backfillAlreadyIngested: 'BackfillFilesAlreadyIngested',
  reconcileListed: 'ReconcileObjectsListed',
  /** Files in the bucket the ledger never saw (lost S3 events), enqueued by reconcile. */
  reconcileMissing: 'ReconcileFilesMissing',
  /** Committed versions whose staged-list delete, event or published mark failed; the sweeper retries. */
  unpublished: 'CommitsUnpublished',
  /** Commit requests the sweeper re-sent for committed, unpublished batches. */
  unpublishedResent: 'UnpublishedResent',
  /** The manifest bucket holds versions beyond the ledger's head: the table is refused until fixed. */
  manifestAhead: 'ManifestAheadOfLedger',
  /** A SEALED batch whose staged list is gone: an invariant break. */
  stagedListMissing: 'StagedListsMissing',
  /** Tables whose sweep failed this run (the others went on). */
  sweepErrors: 'SweepTableErrors',
  /** Stale batches the sweeper found but left for its next run (per-run cap or time budget). */
  sweepDeferred: 'SweepDeferred',
  /** Bronze sink (docs/bronze.md): manifest versions it wrote as Delta commits (cursor advanced). */
  sinkVersions: 'SinkVersionsWritten',
  sinkRows: 'SinkRowsWritten',
  /** Rows with something in `_rescued_data` (a misfit value, a new column kept out, an unparsable record). */
  sinkRescued: 'SinkRowsRescued',
  sinkDataFiles: 'SinkDataFilesWritten',
  /** Bytes of Parquet data files (a Count: the MetricsSink has no byte unit). */
  sinkDataBytes: 'SinkDataBytesWritten',
  /** cleanSource: landing files deleted or moved (a file over 5 GB too: it is copied in parts). */
  sinkFilesCleaned: 'SinkSourceFilesCleaned',
  /** Landing files a committed version could not read (each logged at WARN with the file and the reason). */
  sinkSourcesMissing: 'SinkSourcesMissing',
  /**
   * cleanSource: landing files left in place for good, never deleted, because the key holds another write
   * than the one the table read (a rewrite since); each also logged at WARN with the file and the reason.
   */
  sinkFilesLeft: 'SinkSourceFilesLeft',
  /** cleanSource runs that stopped on an error (retried by the next run; the Delta writes are not affected). */
  sinkCleanErrors: 'SinkCleanErrors',
  /**
   * Sink runs whose Glue Data Catalog entry could not be brought in step (Glue failed or refused, the name is
   * another table's, or it kept changing): the Delta commits are not affected, the next run retries.
   */
  sinkCatalogErrors: 'SinkCatalogErrors',
  /**
   * Sink runs whose symlink manifests (`symlinkManifest`, for Redshift Spectrum) could not be written at the
   * head: the Delta commits are not affected, the next run retries, vacuum waits for them.
   */
  sinkManifestErrors: 'SinkManifestErrors',
  /** Committed manifest versions not yet in the Delta table after a run (0 when it caught up). */
  sinkBehind: 'SinkVersionsBehind',
  /** Sink runs that failed (the message is retried, then dead-lettered). */
  sinkErrors: 'SinkErrors',
  /** Bronze optimize (docs/bronze.md "Optimize and vacuum"): small files rewritten, and the large files written. */
  optimizeFilesRemoved: 'OptimizeFilesRemoved',
  optimizeFilesAdded: 'OptimizeFilesAdded',
  /** Bytes of the small files rewritten (a Count). */
  optimizeBytes: 'OptimizeBytesRewritten',
  /** Bronze vacuum: data files deleted, and their bytes. */
  vacuumFilesDeleted: 'VacuumFilesDeleted',
  vacuumBytesDeleted: 'VacuumBytesDeleted',
  /** Table maintenance runs (optimize or vacuum of one table) that failed. */
  maintenanceErrors: 'MaintenanceErrors',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** What handlers emit; Powertools Metrics (EMF) in Lambda, an in-memory sink in tests and local mode. */
export interface MetricsSink {
  count(name: MetricName, value: number): void;
  milliseconds(name: MetricName, value: number): void;
  flush(): void;
}

export class MemoryMetrics implements MetricsSink {
  readonly totals = new Map<string, number>();
  readonly samples = new Map<string, number[]>();
  count(name: MetricName, value: number): void {
    this.totals.set(name, (this.totals.get(name) ?? 0) + value);
  }
  milliseconds(name: MetricName, value: number): void {
    const list = this.samples.get(name) ?? [];
    list.push(value);
    this.samples.set(name, list);
  }
  flush(): void {}
}
