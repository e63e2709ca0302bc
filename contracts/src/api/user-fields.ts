import { z } from 'zod';

/**
 * Characters that change how the text around them is shown rather than being shown: C0/C1 controls, line and
 * paragraph separators, and the bidirectional formatting characters (U+202A-U+202E, U+2066-U+2069, the marks
 * U+200E, U+200F, U+061C). In a name other users see, `\u202Enimda` renders as "admin" (Trojan Source,
 * CVE-2021-42574; Unicode TR #36).
 */
const INVISIBLE_FORMATTING = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u;

export const displayUsernameInputSchema = z
  .string()
  .max(1024)
  .refine((value) => !INVISIBLE_FORMATTING.test(value), 'Invalid displayUsername: control and bidirectional formatting characters are not allowed')
  .meta({ description: 'The username as shown; defaults to the username' });

/** Raster images only: an SVG document can carry script when opened on its own. */
const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp|avif);base64,[A-Za-z0-9+/]+={0,2}$/;
const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * Where a user's picture is: an http(s) URL, or an inline raster image. better-auth takes any string, and an
 * app that puts it in a link or an `<img>` would then run a `javascript:` (or `vbscript:`) URL, or read a
 * `file:` one; so those, and anything else that is not a picture on the web, are refused. An empty string
 * stays allowed: it shows nothing.
 */
function isAcceptableImageUrl(value: string): boolean {
  if (value === '') return true;
  if (CONTROL_CHARACTER.test(value)) return false;
  if (value.startsWith('data:')) return DATA_IMAGE.test(value);
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}

export const imageUrlSchema = z
  .string()
  .max(2048)
  .refine(isAcceptableImageUrl, 'Invalid image: expected an http(s) URL or a data:image (png, jpeg, gif, webp, avif) URL')
  .meta({ description: 'An http(s) URL of the picture, or a data:image URL' });
