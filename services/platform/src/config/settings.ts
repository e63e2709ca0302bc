import { z } from 'zod';
import type { ParsedList } from '../perimeter-settings.ts';
import type { CoreValues } from './core.ts';

/** What a setting is for, and how the README states its default when parsing nothing cannot show it. */
export interface SettingDoc {
  readonly description: string;
  /** The default as the README states it, where there is none to show (a generated secret, a derived URL). */
  readonly shownDefault?: string;
}

const docs = new WeakMap<z.ZodType, SettingDoc>();

/** A setting with its documentation: the README's configuration table is generated from these. */
export function setting<T extends z.ZodType>(schema: T, description: string, shownDefault?: string): T {
  docs.set(schema, { description, ...(shownDefault !== undefined ? { shownDefault } : {}) });
  return schema;
}

export function docOf(schema: z.ZodType): SettingDoc | undefined {
  return docs.get(schema);
}

export const seconds = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
export const lifetime = (fallback: number) => z.coerce.number().int().positive().default(fallback);
export const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** better-auth refuses cookie max ages above 400 days (the limit browsers enforce, RFC 6265bis). */
export const MAX_COOKIE_AGE_SECONDS = 34_560_000;

/** A comma-separated list checked entry by entry; every bad entry is reported. */
export const list = <T>(parse: (value: string) => ParsedList<T>) =>
  z
    .string()
    .default('')
    .transform((value, ctx): T[] => {
      const parsed = parse(value);
      for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      return parsed.values;
    });

/**
 * One concern's settings: their schemas (each documented with `setting`) and how they become the typed
 * part of the configuration that concern reads. `build` is handed the core settings too (the base URL, the
 * Redis URL...) that several concerns derive from.
 */
export interface SettingsSection<Shape extends z.ZodRawShape, Built> {
  readonly title: string;
  readonly shape: Shape;
  build(values: z.infer<z.ZodObject<Shape>>, core: CoreValues): Built;
}

export function section<Shape extends z.ZodRawShape, Built>(
  title: string,
  shape: Shape,
  build: (values: z.infer<z.ZodObject<Shape>>, core: CoreValues) => Built,
): SettingsSection<Shape, Built> {
  return { title, shape, build };
}
