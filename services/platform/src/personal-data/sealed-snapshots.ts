import { LRUCache } from 'lru-cache';
import type { PersonalData } from './personal-data.ts';

/**
 * The suffix of the kind a sealed snapshot is kept under. Snapshots kept before sealing (under the bare
 * kind) are never read: they are removed by migration 1732230000300, which names this suffix too.
 */
export const SEALED_SNAPSHOT_SUFFIX = '+sealed';

/** Personal plaintexts a fold met, each with the ids of the keys it was sealed under. */
export type PersonalValues = Map<string, Set<string>>;

/**
 * What one fold of a stream (one snapshot kind) has met: every personal value of the snapshot it started
 * from (`from`; 0: none) and of the events after it, up to `version`. A state of that fold at any version
 * from `from` to `version` holds no personal value outside it, as a fold keeps event values as they are.
 */
interface FoldValues {
  readonly from: number;
  version: number;
  readonly values: PersonalValues;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function walkStrings(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const item of value) walkStrings(item, visit);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      visit(key);
      walkStrings(item, visit);
    }
  }
}

/** A copy of a JSON value with every string (object keys too) replaced by `replace(string)`. */
function mapStrings(value: unknown, replace: (text: string) => string): Json {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, replace));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [replace(key), mapStrings(item, replace)]));
  }
  return value as Json;
}

export function notePersonalValue(values: PersonalValues, plaintext: string, subjectId: string): void {
  let subjects = values.get(plaintext);
  if (!subjects) values.set(plaintext, (subjects = new Set()));
  subjects.add(subjectId);
}

/**
 * Snapshots with their personal values sealed under the same per-subject keys as the log's (issue 46), so
 * that a user's deletion shreds them with the keys: nothing scans or drops snapshots. The values to seal
 * are known, not guessed from a state's shape: they are those the fold opened (the snapshot it started
 * from, the events after it) or sealed (the events a command appended), noted per stream and kind here
 * between a load and the save of its fold. A save this process cannot vouch for (it did not see the fold
 * from its start: noted values dropped from the bound, or moved past by another process) keeps nothing,
 * which only costs a later load a longer fold.
 *
 * A value met under several keys is sealed under each in turn, so erasing any of them shreds it. A
 * snapshot holding a value whose key is gone is not read (its loader folds the stream from the start,
 * where the log's sealed fields read as erased, and keeps a new one): substituting the erased marker in
 * place could differ from the fold where a non-personal string of the state happens to equal a personal
 * value, and a snapshot must always equal the fold.
 */
export class SnapshotSealing {
  /** By stored stream id, then snapshot kind. */
  private readonly folds: LRUCache<string, Map<string, FoldValues>>;

  constructor(
    private readonly personalData: PersonalData,
    /**
     * Streams whose folds' values are kept: as many as the command handler keeps states of (50,000 by
     * default), so a kept state's snapshot is rarely refused for want of its values.
     */
    streams = 50_000,
  ) {
    this.folds = new LRUCache({ max: streams });
  }

  /** The fold of `kind` read at `version`, from a snapshot at `from` (0: none), met these values. */
  noteRead(streamId: string, kind: string, from: number, version: number, values: PersonalValues): void {
    let kinds = this.folds.get(streamId);
    if (!kinds) this.folds.set(streamId, (kinds = new Map()));
    kinds.set(kind, { from, version, values });
  }

  /**
   * Events appended to a stream, taking it to `version`, with the values they sealed: each fold noted at
   * the version they followed goes on; any other no longer knows what a state of the stream holds.
   */
  noteAppend(streamId: string, appended: number, version: number, values: PersonalValues): void {
    const kinds = this.folds.get(streamId);
    if (!kinds) return;
    for (const [kind, fold] of kinds) {
      if (fold.version !== version - appended) {
        kinds.delete(kind);
        continue;
      }
      fold.version = version;
      for (const [plaintext, subjects] of values) for (const subjectId of subjects) notePersonalValue(fold.values, plaintext, subjectId);
    }
  }

  /**
   * The state as a snapshot keeps it, its personal values sealed; null when it must not be kept (the fold
   * was not seen, or a key it needs is erased).
   */
  async seal(streamId: string, kind: string, version: number, state: unknown): Promise<Json | null> {
    const fold = this.folds.get(streamId)?.get(kind);
    if (!fold || version < fold.from || version > fold.version) return null;
    const held = new Map<string, readonly string[]>();
    walkStrings(state, (text) => {
      const subjects = fold.values.get(text);
      if (subjects) held.set(text, [...subjects].sort());
    });
    if (held.size === 0) return state as Json;
    const keys = await this.personalData.keys.keysForReading([...new Set([...held.values()].flat())]);
    const sealedOf = new Map<string, string>();
    for (const [plaintext, subjects] of held) {
      let sealed = plaintext;
      for (const subjectId of subjects) {
        const key = keys.get(subjectId);
        if (!key) return null;
        sealed = this.personalData.cipher.encrypt(subjectId, key, sealed);
      }
      sealedOf.set(plaintext, sealed);
    }
    return mapStrings(state, (text) => sealedOf.get(text) ?? text);
  }

  /**
   * A kept state opened, with the personal values it held (a fold from it starts knowing them); null
   * when one of its keys is gone.
   */
  async open(state: unknown): Promise<{ state: Json; values: PersonalValues } | null> {
    const values: PersonalValues = new Map();
    /** The keys already peeled off a value still sealed under another (a value met under several). */
    const peeledOf = new Map<string, readonly string[]>();
    let current = state as Json;
    // One round per layer: a value sealed under several keys opens one key per round.
    for (;;) {
      const sealed = new Set<string>();
      walkStrings(current, (text) => {
        if (this.personalData.cipher.subjectOf(text) !== null) sealed.add(text);
      });
      if (sealed.size === 0) return { state: current, values };
      const texts = [...sealed];
      const subjects = texts.map((text) => this.personalData.cipher.subjectOf(text)!);
      const keys = await this.personalData.keys.keysForReading([...new Set(subjects)]);
      if (subjects.some((subjectId) => !keys.get(subjectId))) return null;
      const opened = await this.personalData.cipher.decryptAll(
        texts,
        subjects.map((subjectId) => keys.get(subjectId)!),
      );
      const openedOf = new Map<string, string>();
      for (const [index, text] of texts.entries()) {
        const inner = opened[index];
        if (inner === null || inner === undefined) return null;
        openedOf.set(text, inner);
        const peeled = [...(peeledOf.get(text) ?? []), subjects[index]!];
        if (this.personalData.cipher.subjectOf(inner) === null) for (const subjectId of peeled) notePersonalValue(values, inner, subjectId);
        else peeledOf.set(inner, peeled);
      }
      current = mapStrings(current, (text) => openedOf.get(text) ?? text);
    }
  }
}
