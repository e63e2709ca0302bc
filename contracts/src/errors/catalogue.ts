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
  FAILED_TO_UNLINK_LAST_ACCOUNT: { status: 400, message: "You can't unlink your last account" },
  ACCOUNT_NOT_FOUND: { status: 400, message: 'Account not found' },
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
  // AUTH_DISABLE_SIGN_UP: the spec is silent; better-auth 1.7's sign-up route (emailAndPassword.disableSignUp).
  EMAIL_PASSWORD_SIGN_UP_DISABLED: { status: 400, message: 'Email and password sign up is not enabled' },
  // better-auth sends this message without a code; the catalogue needs one.
  EMAIL_IS_THE_SAME: { status: 400, message: 'Email is the same' },
  COULDNT_UPDATE_YOUR_EMAIL: { status: 400, message: "Couldn't update your email" },
  // better-auth 1.7's code for set-password; the spec's message.
  PASSWORD_ALREADY_SET: { status: 400, message: 'user already has a password' },
  FAILED_TO_GET_USER_INFO: { status: 404, message: 'Failed to get user info' },
  FAILED_TO_CREATE_VERIFICATION: { status: 500, message: 'Unable to create verification' },
  // Social sign-in (spec sections 7 and 8), with better-auth's statuses.
  PROVIDER_NOT_FOUND: { status: 404, message: 'Provider not found' },
  ID_TOKEN_NOT_SUPPORTED: { status: 404, message: 'id_token not supported' },
  // better-auth answers a refused id token with 401 under INVALID_TOKEN.
  INVALID_ID_TOKEN: { status: 401, message: 'invalid token', code: 'INVALID_TOKEN' },
  USER_EMAIL_NOT_FOUND: { status: 401, message: 'User email not found' },
  // The id-token branch answers the callback's refusals under one code, with the callback's words.
  ACCOUNT_NOT_LINKED: { status: 401, message: 'account not linked', code: 'OAUTH_LINK_ERROR' },
  SIGNUP_DISABLED: { status: 401, message: 'signup disabled', code: 'OAUTH_LINK_ERROR' },
  UNABLE_TO_LINK_ACCOUNT: { status: 401, message: 'unable to link account', code: 'OAUTH_LINK_ERROR' },
  ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER: { status: 401, message: 'account already linked to different user', code: 'OAUTH_LINK_ERROR' },
  EMAIL_DOES_NOT_MATCH: { status: 401, message: 'email does not match', code: 'OAUTH_LINK_ERROR' },
  USER_ID_OR_SESSION_REQUIRED: { status: 400, message: 'Either userId or session is required' },
  FAILED_TO_REFRESH_ACCESS_TOKEN: { status: 400, message: 'Failed to refresh access token' },
  FAILED_TO_GET_ACCESS_TOKEN: { status: 400, message: 'Failed to get a valid access token' },
  REFRESH_TOKEN_NOT_FOUND: { status: 400, message: 'Refresh token not found' },
  TOKEN_REFRESH_NOT_SUPPORTED: { status: 400, message: 'This provider does not support token refreshing.' },
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
  // Behind a trusted proxy, an X-Forwarded-For entry that is no IP address (better-auth would count all such
  // clients in one shared bucket; here they are refused).
  INVALID_CLIENT_ADDRESS: { status: 400, message: 'Invalid client address' },
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
  // Organizations (spec sections 4-8): the organization plugin's codes; messages from the spec, else better-auth.
  // Where better-auth answers one code with two statuses, the route passes the other status explicitly.
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION: { status: 403, message: 'You are not allowed to create a new organization' },
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS: { status: 403, message: 'You have reached the maximum number of organizations' },
  ORGANIZATION_ALREADY_EXISTS: { status: 400, message: 'Organization already exists' },
  // The spec's message for a taken slug (check-slug); better-auth 1.7 says 'Organization slug already taken',
  // which update answers under the same code.
  ORGANIZATION_SLUG_ALREADY_TAKEN: { status: 400, message: 'slug is taken' },
  ORGANIZATION_SLUG_TAKEN_ON_UPDATE: { status: 400, message: 'Organization slug already taken', code: 'ORGANIZATION_SLUG_ALREADY_TAKEN' },
  ORGANIZATION_NOT_FOUND: { status: 400, message: 'Organization not found' },
  ORGANIZATION_DELETION_DISABLED: { status: 404, message: 'Organization deletion is disabled' },
  USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION: { status: 400, message: 'User is not a member of the organization' },
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION: { status: 403, message: 'You are not allowed to update this organization' },
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION: { status: 403, message: 'You are not allowed to delete this organization' },
  NO_ACTIVE_ORGANIZATION: { status: 400, message: 'No active organization' },
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: { status: 400, message: 'User is already a member of this organization' },
  MEMBER_NOT_FOUND: { status: 400, message: 'Member not found' },
  ROLE_NOT_FOUND: { status: 400, message: 'Role not found' },
  TEAM_NOT_FOUND: { status: 400, message: 'Team not found' },
  INVALID_TEAM_ID: { status: 400, message: 'Team id contains a reserved character' },
  TEAMS_NOT_ENABLED: { status: 400, message: 'Teams are not enabled' },
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: { status: 400, message: 'You cannot leave the organization as the only owner' },
  // update-member-role: the only owner taking the owner role from themself.
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER: { status: 400, message: 'You cannot leave the organization without an owner' },
  // better-auth 1.7's remove-member answers it with 403.
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER: { status: 403, message: 'You are not allowed to delete this member' },
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER: { status: 403, message: 'You are not allowed to update this member' },
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION: {
    status: 403,
    message: 'You are not allowed to invite users to this organization',
  },
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: { status: 403, message: 'You are not allowed to invite a user with this role' },
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: { status: 400, message: 'User is already invited to this organization' },
  INVITATION_NOT_FOUND: { status: 400, message: 'Invitation not found' },
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: { status: 403, message: 'You are not the recipient of the invitation' },
  EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION: {
    status: 403,
    message: 'Email verification required before accepting or rejecting invitation',
  },
  EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION: {
    status: 403,
    message: 'Email verification required to view or list invitations for the session email',
  },
  YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION: { status: 403, message: 'You are not allowed to cancel this invitation' },
  YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS: {
    status: 403,
    message: 'You are not allowed to list invitations for this organization',
  },
  INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION: { status: 400, message: 'Inviter is no longer a member of the organization' },
  FAILED_TO_RETRIEVE_INVITATION: { status: 400, message: 'Failed to retrieve invitation' },
  INVITATION_LIMIT_REACHED: { status: 403, message: 'Invitation limit reached' },
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: { status: 403, message: 'Organization membership limit reached' },
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS: { status: 400, message: 'You have reached the maximum number of teams' },
  UNABLE_TO_REMOVE_LAST_TEAM: { status: 400, message: 'Unable to remove last team' },
  YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION: {
    status: 403,
    message: 'You are not allowed to create teams in this organization',
  },
  YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION: {
    status: 403,
    message: 'You are not allowed to delete teams in this organization',
  },
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM: { status: 403, message: 'You are not allowed to update this team' },
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM: { status: 403, message: 'You are not allowed to delete this team' },
  TEAM_MEMBER_LIMIT_REACHED: { status: 403, message: 'Team member limit reached' },
  USER_IS_NOT_A_MEMBER_OF_THE_TEAM: { status: 400, message: 'User is not a member of the team' },
  YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM: { status: 400, message: 'You do not have an active team' },
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER: { status: 403, message: 'You are not allowed to create a new member' },
  YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER: { status: 403, message: 'You are not allowed to remove a team member' },
  YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION: {
    status: 403,
    message: 'You are not allowed to access this organization as an owner',
  },
  YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION: { status: 403, message: 'You are not a member of this organization' },
  // better-auth answers these without a code (list-invitations, get-invitation); the catalogue needs one.
  NOT_AUTHENTICATED: { status: 401, message: 'Not authenticated' },
  ORGANIZATION_ID_IS_REQUIRED: { status: 400, message: 'Organization ID is required' },
  // list-user-invitations: better-auth's uncoded refusals of a client naming an address, or naming none.
  USER_EMAIL_CANNOT_BE_PASSED_FOR_CLIENT_SIDE_API_CALLS: { status: 400, message: 'User email cannot be passed for client side API calls.' },
  MISSING_SESSION_HEADERS_OR_EMAIL_QUERY_PARAMETER: { status: 400, message: 'Missing session headers, or email query parameter.' },
  // has-permission: better-auth's access-control refusals (spec section 6).
  NOT_AUTHORIZED: { status: 403, message: 'Not authorized' },
  // The admin plugin (spec section 6): better-auth 1.7's ADMIN_ERROR_CODES, statuses and messages to the letter.
  BANNED_USER: { status: 403, message: 'You have been banned from this application. Please contact support if you believe this is an error.' },
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: { status: 400, message: 'User already exists. Use another email.' },
  YOU_CANNOT_BAN_YOURSELF: { status: 400, message: 'You cannot ban yourself' },
  YOU_CANNOT_REMOVE_YOURSELF: { status: 400, message: 'You cannot remove yourself' },
  YOU_CANNOT_IMPERSONATE_ADMINS: { status: 403, message: 'You cannot impersonate admins' },
  // Ours: admins acting on admins (README, "Admins and admins"): only an ADMIN_USER_IDS admin acts on another admin,
  // nobody takes their own admin rights away, and an impersonation session carries no admin writes.
  YOU_CANNOT_ACT_ON_ADMINS: { status: 403, message: 'You cannot act on admins' },
  YOU_CANNOT_REMOVE_YOUR_OWN_ADMIN_ROLE: { status: 400, message: 'You cannot remove your own admin role' },
  YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING: { status: 403, message: 'You cannot use admin actions while impersonating. Stop impersonating first' },
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: { status: 403, message: 'You are not allowed to change users role' },
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: { status: 403, message: 'You are not allowed to create users' },
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: { status: 403, message: 'You are not allowed to list users' },
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: { status: 403, message: 'You are not allowed to list users sessions' },
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: { status: 403, message: 'You are not allowed to ban users' },
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: { status: 403, message: 'You are not allowed to impersonate users' },
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: { status: 403, message: 'You are not allowed to revoke users sessions' },
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: { status: 403, message: 'You are not allowed to delete users' },
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: { status: 403, message: 'You are not allowed to set users password' },
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: { status: 403, message: 'You are not allowed to get user' },
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: { status: 403, message: 'You are not allowed to update users' },
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: { status: 403, message: 'You are not allowed to update users email' },
  // Ours: the audit trail is an operator's, for admins who may list users and their sessions.
  YOU_ARE_NOT_ALLOWED_TO_READ_THE_AUDIT_TRAIL: { status: 403, message: 'You are not allowed to read the audit trail' },
  // Ours: the other operator endpoints (projections, mail), for the same admins.
  YOU_ARE_NOT_ALLOWED_TO_OPERATE: { status: 403, message: 'You are not allowed to use the operator endpoints' },
  PROJECTION_NOT_FOUND: { status: 404, message: 'Projection not found' },
  PROJECTION_CANNOT_BE_REBUILT: { status: 400, message: 'This projection owns no read model to rebuild' },
  PROJECTION_REBUILD_NOT_FOUND: { status: 404, message: 'Projection rebuild not found' },
  MAIL_DELIVERY_NOT_FOUND: { status: 404, message: 'Mail delivery not found' },
  MAIL_DELIVERY_NOT_DEAD: { status: 409, message: 'Only a dead-lettered mail can be retried' },
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: { status: 400, message: 'You are not allowed to set a non-existent role value' },
  INVALID_ROLE_TYPE: { status: 400, message: 'Invalid role type' },
  NO_DATA_TO_UPDATE: { status: 400, message: 'No data to update' },
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: {
    status: 400,
    message: 'Password cannot be updated through update-user. Use the set-user-password endpoint instead',
  },
  USER_ID_CANNOT_BE_UPDATED: { status: 400, message: 'User id cannot be updated' },
  // better-auth answers these without a code (stop-impersonating, has-permission); the catalogue needs one.
  YOU_ARE_NOT_IMPERSONATING_ANYONE: { status: 400, message: 'You are not impersonating anyone' },
  FAILED_TO_FIND_ADMIN_SESSION: { status: 500, message: 'Failed to find admin session' },
  INVALID_PERMISSION_CHECK: { status: 400, message: 'invalid permission check. no permission(s) were passed.' },
  // Schema failures: better-auth's code, the spec's message; the issue list travels in `details`.
  VALIDATION_ERROR: { status: 400, message: 'Invalid body parameters' },
  INVALID_QUERY_PARAMETERS: { status: 400, message: 'Invalid query parameters' },
  BAD_REQUEST: { status: 400, message: 'Invalid JSON in request body' },
  BODY_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type is not allowed. Allowed types: application/json' },
  NOT_FOUND: { status: 404, message: 'Not Found' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service unavailable' },
  // A write that kept meeting concurrent writes to what it decided on (after retries): never a 500.
  CONFLICT: { status: 409, message: 'The resource was changed by another request. Try again.' },
  INTERNAL_SERVER_ERROR: { status: 500, message: 'Internal Server Error' },
} as const satisfies Record<string, { status: number; message: string; code?: string }>;

export type ErrorCode = keyof typeof errorCatalogue;


/**
 * The code an answer carries: the entry's key, unless the entry is another spelling of a better-auth code
 * (the spec gives one code two messages), which clients still see under that code.
 */
export function wireCode(code: ErrorCode): string {
  const entry: { message: string; code?: string } = errorCatalogue[code];
  return entry.code ?? code;
}
