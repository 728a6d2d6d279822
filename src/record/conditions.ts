/**
 * Promises that resolve when a condition holds or a timeout passes, whichever
 * comes first; `recheck()` is called whenever something they watch may have
 * changed. They never reject.
 */
export class Conditions {
  private readonly waiting = new Set<() => void>();

  waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.delete(check);
        resolve();
      }, timeoutMs);
      this.waiting.add(check);
    });
  }

  recheck(): void {
    for (const check of [...this.waiting]) check();
  }
}
