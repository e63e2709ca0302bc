import { z } from 'zod';
import type { ParsedList } from '../perimeter-settings.ts';
import type { CoreValues } from './core.ts';

/** What a setting is for, and how the README states its default when parsing nothing cannot show it. */
export interface SettingDoc {
  readonly description: string;
  /** The default as the README states it, where there is none to show (a generated secret, a derived URL). */
  readonly shownDefault?: string;
  /** Set on a member of a family of settings that the README documents as one row. */
  readonly family?: { readonly pattern: string; readonly member: string };
}

const docs = new WeakMap<z.ZodType, SettingDoc>();

/** A setting with its documentation: the README's configuration table is generated from these. */
export function setting<T extends z.ZodType>(schema: T, description: string, shownDefault?: string): T {
  docs.set(schema, { description, ...(shownDefault !== undefined ? { shownDefault } : {}) });
  return schema;
}

/**
 * Settings that differ only in one part of their name (`AUTH_<PROVIDER>_CLIENT_ID` for every provider): the
 * README documents the family as one row naming its members, where a row each would drown the table. Each
 * member is its own schema, so each is parsed and reported under its own name.
 */
export function settingFamily(pattern: string, description: string, shownDefault?: string) {
  return <T extends z.ZodType>(member: string, schema: T): T => {
    docs.set(schema, { description, ...(shownDefault !== undefined ? { shownDefault } : {}), family: { pattern, member } });
    return schema;
  };
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

/** The environment as loadConfig read it: set variables only. */
export type Environment = Readonly<Record<string, string>>;

/**
 * Variables whose names are made at deployment (`AUTH_OIDC_<NAME>_CLIENT_ID` for each configured name), so
 * no schema can hold them: the section reads them from the environment, and documents them as patterns.
 */
export interface DeploymentNamedSettings {
  readonly documentation: readonly { readonly pattern: string; readonly shownDefault: string; readonly description: string }[];
  /** What is wrong with them, each message starting with the variable's name. */
  problems(environment: Environment): string[];
}

/**
 * One concern's settings: their schemas (each documented with `setting`) and how they become the typed
 * part of the configuration that concern reads. `build` is handed the core settings too (the base URL, the
 * Redis URL...) that several concerns derive from, and the environment, for deployment-named settings.
 */
export interface SettingsSection<Shape extends z.ZodRawShape, Built> {
  readonly title: string;
  readonly shape: Shape;
  build(values: z.infer<z.ZodObject<Shape>>, core: CoreValues, environment: Environment): Built;
  readonly deploymentNamed?: DeploymentNamedSettings;
}

export function section<Shape extends z.ZodRawShape, Built>(
  title: string,
  shape: Shape,
  build: (values: z.infer<z.ZodObject<Shape>>, core: CoreValues, environment: Environment) => Built,
  deploymentNamed?: DeploymentNamedSettings,
): SettingsSection<Shape, Built> {
  return { title, shape, build, ...(deploymentNamed ? { deploymentNamed } : {}) };
}
