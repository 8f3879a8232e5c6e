// A promise whose work starts only when somebody waits for it (or asks for it to start).

export interface Lazy<T> extends PromiseLike<T> {
  /** Starts the work now, without waiting for it; a failure then surfaces to whoever awaits. */
  start(): void;
}

export function lazy<T>(make: () => Promise<T>): Lazy<T> {
  let running: Promise<T> | null = null;
  const run = (): Promise<T> => {
    if (running === null) {
      running = make();
      running.catch(() => undefined); // awaited by whoever needs it; this only keeps it from going unhandled
    }
    return running;
  };
  return {
    then: (onFulfilled, onRejected) => run().then(onFulfilled, onRejected),
    start: () => void run(),
  };
}
