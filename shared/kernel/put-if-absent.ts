/**
 * What a create-if-absent (S3 `PutObject` with `If-None-Match: *`) answered, for every store that makes one:
 * `created`; `exists` (412, the key is there); `conflict` (409, another conditional write to the key was in
 * flight: try again shortly, it says nothing about whether the key exists yet).
 */
export type PutIfAbsentResult = 'created' | 'exists' | 'conflict';
