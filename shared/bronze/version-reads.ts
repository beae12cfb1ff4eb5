/**
 * What the sink read of a version's landing files, as its Delta commit records it (`commitInfo.inlet`):
 * cleanSource removes only writes the table read as the manifest names them, so it needs the exceptions.
 * Recorded as exceptions, not per file: a commit of 20,000 files would otherwise carry megabytes every
 * reader replaying the log parses.
 */
export interface VersionReads {
  /** Files recorded missing: not read at all, so nothing of them is in the table. */
  readonly missing: ReadonlySet<string>;
  /**
   * Files read at another write than the manifest names (path identity: the key was rewritten since its
   * event, or the manifest's version is gone and the current object was read).
   */
  readonly rewritten: ReadonlySet<string>;
}

/** `s3://bucket/key`, as the commit and the `_source_file` column name a landing file. */
export const sourceUrl = (ref: { readonly bucket: string; readonly key: string }) =>
  `s3://${ref.bucket}/${ref.key}`;

interface InletCommitInfo {
  readonly manifestVersion?: number;
  readonly missingSources?: ReadonlyArray<string | { readonly url?: string }>;
  readonly rewrittenSources?: ReadonlyArray<string | { readonly url?: string }>;
}

const urls = (list: InletCommitInfo['missingSources']) =>
  new Set((list ?? []).flatMap((x) => (typeof x === 'string' ? [x] : x.url ? [x.url] : [])));

/**
 * The reads of manifest version `manifestVersion` from its commit's text, or undefined when the text is not
 * the sink's commit of that version (then nothing of the version may be cleaned). A commit written before
 * `rewrittenSources` existed has none: its path-identity reads are taken as the manifest's writes.
 */
export function versionReadsOf(commit: string, manifestVersion: number): VersionReads | undefined {
  for (const line of commit.split('\n')) {
    if (!line.includes('"commitInfo"')) continue;
    let inlet: InletCommitInfo | undefined;
    try {
      inlet = (JSON.parse(line) as { commitInfo?: { inlet?: InletCommitInfo } }).commitInfo?.inlet;
    } catch {
      return undefined;
    }
    if (inlet?.manifestVersion !== manifestVersion) return undefined;
    return { missing: urls(inlet.missingSources), rewritten: urls(inlet.rewrittenSources) };
  }
  return undefined;
}
