import { ConfigError } from './errors.js';

/**
 * The one validation kit of every public class's options, so every refusal
 * reads alike: ``Expected `name` to be <what>, got `<value>` `` — the option,
 * the expectation, the value received. Each function returns the value (or
 * `fallback` when it is undefined) or throws a {@link ConfigError}.
 */

/** A value as a refusal shows it: strings quoted, so `"5"` and `5` read apart; long ones cut. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return String(value);
}

/** The refusal, in the one wording. */
export function expected(name: string, expectation: string, value: unknown): ConfigError {
  return new ConfigError(`Expected \`${name}\` to be ${expectation}, got \`${shown(value)}\``);
}

/** An integer in [min, max]; `fallback` when undefined (no fallback: required). */
export function integerOption(name: string, value: unknown, fallback: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw expected(name, min === 1 ? 'a positive integer' : `an integer ≥ ${min}`, value);
  }
  if (value > max) throw expected(name, `at most ${max}`, value);
  return value;
}

/** A positive safe integer. */
export function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  return integerOption(name, value, fallback, 1);
}

/** A safe integer ≥ 0. */
export function nonNegativeInteger(name: string, value: number | undefined, fallback: number): number {
  return integerOption(name, value, fallback, 0);
}

/** A number from 0 to 1. */
export function fraction(name: string, value: number | undefined, fallback: number): number {
  const rate = value ?? fallback;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) throw expected(name, 'a number from 0 to 1', rate);
  return rate;
}

/** A finite number that passes `ok`, described by `expectation`. */
export function numberOption(name: string, value: unknown, ok: (v: number) => boolean, expectation: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value)) throw expected(name, expectation, value);
  return value;
}

/** A non-empty string (of at most `maxLength` characters). */
export function nonEmptyString(name: string, value: unknown, fallback?: string, maxLength = Number.MAX_SAFE_INTEGER): string {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || value === '' || value.length > maxLength) {
    throw expected(name, maxLength === Number.MAX_SAFE_INTEGER ? 'a non-empty string' : `a string of 1 to ${maxLength} characters`, value);
  }
  return value;
}

/** One of `allowed`; `fallback` when undefined. */
export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly unknown[]).includes(value)) throw expected(name, `one of ${allowed.join(', ')}`, value);
  return value as T;
}

/** A string, or undefined. */
export function optionalString(name: string, value: unknown): string | undefined {
  if (value !== undefined && typeof value !== 'string') throw expected(name, 'a string', value);
  return value;
}

/** A function, or undefined. */
export function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw expected(name, 'a function', value);
  return value;
}

/** An array of strings, or undefined. */
export function optionalStrings(name: string, value: unknown): readonly string[] | undefined {
  if (value !== undefined && (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))) throw expected(name, 'an array of strings', value);
  return value as readonly string[] | undefined;
}

/** The options object itself (`what`: whose options). */
export function optionsObject<T extends object>(what: string, value: T | undefined, optional = false): T {
  if (value === undefined && optional) return {} as T;
  if (value === null || typeof value !== 'object') throw new ConfigError(`Expected ${what} options to be an object, got \`${shown(value)}\``);
  return value;
}
