import { ConfigError } from './errors.js';

/** `value`, or `fallback` when undefined; a {@link ConfigError} naming the option unless a positive safe integer. */
export function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`Expected \`${name}\` to be a positive integer, got \`${String(value)}\``);
  }
  return value;
}

/** `value`, or `fallback` when undefined; a {@link ConfigError} naming the option unless a safe integer ≥ 0. */
export function nonNegativeInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`Expected \`${name}\` to be an integer ≥ 0, got \`${String(value)}\``);
  }
  return value;
}

/** A {@link ConfigError} naming the option unless `value` is a number from 0 to 1. */
export function fraction(name: string, value: number | undefined, fallback: number): number {
  const rate = value ?? fallback;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
    throw new ConfigError(`Expected \`${name}\` to be a number from 0 to 1, got \`${String(rate)}\``);
  }
  return rate;
}
