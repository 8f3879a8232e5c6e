// Retry timing for client tests: waits are recorded instead of slept, and jitter is fixed at its middle.
export function noWait(): { sleeps: number[]; sleep: (ms: number) => Promise<void>; retry: { random: () => number } } {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    retry: { random: () => 0.5 },
  };
}
