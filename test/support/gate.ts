/** Holds one port method until released: a batcher or committer that stalls mid-protocol (GC pause, slow network). */
export class Gate {
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  reached = false;
  private onReached?: () => void;
  readonly arrived = new Promise<void>((resolve) => {
    this.onReached = resolve;
  });

  open(): void {
    this.release();
  }

  wrap<T extends object>(port: T, method: string): T {
    return new Proxy(port, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver);
        if (property !== method || typeof value !== 'function')
          return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          this.reached = true;
          this.onReached?.();
          await this.opened;
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
  }
}
