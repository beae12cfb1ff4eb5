/** Time and randomness, injectable so the simulation can run the same code on a simulated clock. */
export interface Clock {
  /** epoch ms */
  readonly now: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}
