/**
 * Every error the HTTP API can answer with. Keys are better-auth's error codes, so better-auth clients that
 * switch on `error.code` keep working; status and message come from the product spec, to the letter, and
 * from better-auth where the spec is silent.
 */
export const errorCatalogue = {
  // Account and session (spec section 8)
  USER_NOT_FOUND: { status: 404, message: 'User not found' },
  FAILED_TO_CREATE_USER: { status: 422, message: 'Failed to create user' },
  FAILED_TO_CREATE_SESSION: { status: 500, message: 'Failed to create session' },
  FAILED_TO_UPDATE_USER: { status: 500, message: 'Failed to update user' },
  FAILED_TO_GET_SESSION: { status: 500, message: 'Failed to get session' },
  INVALID_PASSWORD: { status: 400, message: 'Invalid password' },
  INVALID_EMAIL: { status: 400, message: 'Invalid email' },
  INVALID_EMAIL_OR_PASSWORD: { status: 401, message: 'Invalid email or password' },
  PASSWORD_TOO_SHORT: { status: 400, message: 'Password too short' },
  PASSWORD_TOO_LONG: { status: 400, message: 'Password too long' },
  // The spec's message; better-auth 1.7 says 'User already exists. Use another email.' under another code.
  USER_ALREADY_EXISTS: { status: 422, message: 'User already exists' },
  CREDENTIAL_ACCOUNT_NOT_FOUND: { status: 400, message: 'Credential account not found' },
  // better-auth answers it with 400 (BAD_REQUEST), from POST /delete-user on a session that is not fresh.
  SESSION_EXPIRED: { status: 400, message: 'Session expired. Re-authenticate to perform this action.' },
  SESSION_NOT_FRESH: { status: 403, message: 'Session is not fresh' },
  SESSION_NOT_FOUND: { status: 404, message: 'Session not found' },
  EMAIL_CAN_NOT_BE_UPDATED: { status: 400, message: 'Email can not be updated' },
  NO_FIELDS_TO_UPDATE: { status: 400, message: 'No fields to update' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  // Email lifecycle: verification, password reset, change email, delete user (spec sections 4, 5, 8).
  EMAIL_NOT_VERIFIED: { status: 403, message: 'Email not verified' },
  EMAIL_ALREADY_VERIFIED: { status: 400, message: 'Email is already verified' },
  EMAIL_MISMATCH: { status: 400, message: 'Email mismatch' },
  // The spec's spelling; better-auth capitalises it ('Invalid token').
  INVALID_TOKEN: { status: 400, message: 'invalid token' },
  TOKEN_EXPIRED: { status: 401, message: 'Token expired' },
  INVALID_USER: { status: 400, message: 'Invalid user' },
  VERIFICATION_EMAIL_NOT_ENABLED: { status: 400, message: "Verification email isn't enabled" },
  RESET_PASSWORD_DISABLED: { status: 400, message: "Reset password isn't enabled" },
  CHANGE_EMAIL_DISABLED: { status: 400, message: 'Change email is disabled' },
  // better-auth sends this message without a code; the catalogue needs one.
  EMAIL_IS_THE_SAME: { status: 400, message: 'Email is the same' },
  COULDNT_UPDATE_YOUR_EMAIL: { status: 400, message: "Couldn't update your email" },
  // better-auth 1.7's code for set-password; the spec's message.
  PASSWORD_ALREADY_SET: { status: 400, message: 'user already has a password' },
  FAILED_TO_GET_USER_INFO: { status: 404, message: 'Failed to get user info' },
  FAILED_TO_CREATE_VERIFICATION: { status: 500, message: 'Unable to create verification' },
  // Spec section 5: callback URLs off the trusted origins are refused as forbidden.
  INVALID_CALLBACK_URL: { status: 403, message: 'Invalid callbackURL' },
  INVALID_REDIRECT_URL: { status: 403, message: 'Invalid redirectURL' },
  INVALID_ERROR_CALLBACK_URL: { status: 403, message: 'Invalid errorCallbackURL' },
  INVALID_NEW_USER_CALLBACK_URL: { status: 403, message: 'Invalid newUserCallbackURL' },
  // Spec section 5: cross-origin POSTs carrying cookies are checked against the trusted origins (better-auth's
  // origin check); sign-in and sign-up also refuse a cross-site form navigation (its formCsrf check).
  MISSING_OR_NULL_ORIGIN: { status: 403, message: 'Missing or null Origin' },
  INVALID_ORIGIN: { status: 403, message: 'Invalid origin' },
  CROSS_SITE_NAVIGATION_LOGIN_BLOCKED: {
    status: 403,
    message: 'Cross-site navigation login blocked. This request appears to be a CSRF attack.',
  },
  // better-auth's rate limiter answers this message without a code (and `X-Retry-After`); the catalogue needs one.
  TOO_MANY_REQUESTS: { status: 429, message: 'Too many requests. Please try again later.' },
  // Spec sections 5 and 9: the session_data cookie cache is refused above 4093 characters.
  SESSION_DATA_TOO_LARGE: { status: 500, message: 'Session data is too large to store in the cookie' },
  // Usernames (spec section 8): the username plugin's codes with the spec's messages and its 422 for every
  // refused username (better-auth 1.7 capitalises the messages, and says 400 on sign-up and update-user).
  INVALID_USERNAME_OR_PASSWORD: { status: 401, message: 'invalid username or password' },
  // The username plugin's spelling of EMAIL_NOT_VERIFIED, answered under that code.
  USERNAME_EMAIL_NOT_VERIFIED: { status: 403, message: 'email not verified', code: 'EMAIL_NOT_VERIFIED' },
  USERNAME_IS_ALREADY_TAKEN: { status: 422, message: 'username is already taken. please try another.' },
  USERNAME_TOO_SHORT: { status: 422, message: 'username is too short' },
  USERNAME_TOO_LONG: { status: 422, message: 'username is too long' },
  INVALID_USERNAME: { status: 422, message: 'username is invalid' },
  // Brute-force protection (Portcullis's own; better-auth has none): sign-ins with one email or username are
  // refused for a while after repeated failures, whatever the source IP; `X-Retry-After` says how long.
  TOO_MANY_FAILED_SIGN_INS: { status: 429, message: 'Too many failed sign-in attempts. Please try again later.' },
  // Captcha: better-auth's captcha plugin codes and messages. A verify service that fails or does not answer
  // in time is a refusal (fail closed), answered as better-auth does.
  MISSING_RESPONSE: { status: 400, message: 'Missing CAPTCHA response' },
  VERIFICATION_FAILED: { status: 403, message: 'Captcha verification failed' },
  UNKNOWN_ERROR: { status: 500, message: 'Something went wrong' },
  // Schema failures: better-auth's code, the spec's message; the issue list travels in `details`.
  VALIDATION_ERROR: { status: 400, message: 'Invalid body parameters' },
  INVALID_QUERY_PARAMETERS: { status: 400, message: 'Invalid query parameters' },
  BAD_REQUEST: { status: 400, message: 'Invalid JSON in request body' },
  BODY_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type is not allowed. Allowed types: application/json' },
  NOT_FOUND: { status: 404, message: 'Not Found' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service unavailable' },
  INTERNAL_SERVER_ERROR: { status: 500, message: 'Internal Server Error' },
} as const satisfies Record<string, { status: number; message: string; code?: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(errorCatalogue, value);
}

/**
 * The code an answer carries: the entry's key, unless the entry is another spelling of a better-auth code
 * (the spec gives one code two messages), which clients still see under that code.
 */
export function wireCode(code: ErrorCode): string {
  const entry: { message: string; code?: string } = errorCatalogue[code];
  return entry.code ?? code;
}
