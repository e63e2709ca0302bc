import { client, unsignedToken } from './fake-provider.test-support.ts';
import { bearerJson, settingsAt, type ProviderCase } from './provider-case.test-support.ts';
import { facebookProvider } from './facebook.ts';
import { redditProvider } from './reddit.ts';
import { robloxProvider } from './roblox.ts';
import { tiktokProvider } from './tiktok.ts';
import { twitterProvider } from './twitter.ts';
import { vkProvider } from './vk.ts';
import { zoomProvider } from './zoom.ts';

/** Providers that depart from the usual OAuth 2.0 shape somewhere: client names, auth, extra calls, no email. */

const bearerToken = { access_token: 'access-token', token_type: 'bearer', expires_in: 3600, refresh_token: 'refresh-token' };
const bearerTokenParsed = { accessToken: 'access-token', tokenType: 'bearer', refreshToken: 'refresh-token', scopes: [] };

const debugToken = (appId: string) => ({ data: { app_id: appId, type: 'USER', application: 'Portcullis', is_valid: true, user_id: '10160412345', scopes: ['email', 'public_profile'] } });
const graphMe = { id: '10160412345', name: 'Ada Lovelace', email: 'ada@example.com', picture: { data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.com/p', width: 50 } } };

// JSON leaves the undefined email out: the answer has none.
const graphMeEmailless = { ...graphMe, email: undefined };
const limitedLoginClaims = { sub: '10160412345', email: 'ada@example.com', name: 'Ada Lovelace', picture: 'https://p' };
const redditUser = { id: 'abc123', name: 'spez', icon_img: 'https://styles.redditmedia.com/t5_1/styles/profileIcon_x.png?width=256&amp;s=e2f' };
const robloxUser = {
  sub: '1516563360',
  name: 'exampleuser',
  nickname: 'exampleuser',
  preferred_username: 'exampleuser',
  created_at: 1584682495,
  profile: 'https://www.roblox.com/users/1516563360/profile',
  picture: 'https://tr.rbxcdn.com/x/150/150/AvatarHeadshot/Png',
};
const tiktokAnswer = { data: { user: { open_id: 'afd97af1-b87b-48b9', display_name: 'Ada', username: 'ada.l', avatar_large_url: 'https://p16.tiktokcdn.com/a.jpeg' } }, error: { code: 'ok', message: '', log_id: '2022' } };
const twitterUser = { data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers', profile_image_url: 'https://pbs.twimg.com/profile_images/1/x_normal.jpg' } };
const twitterImagelessUser = { data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers' } };
const vkAnswer = {
  user: {
    user_id: '1234567890',
    first_name: 'Ivan',
    last_name: 'Ivanov',
    avatar: 'https://pp.userapi.com/60tZWMo4SmwcploUVl9XEt8ufnTTvDUmQ6Bj1g/mmv1pcj63C4.png',
    email: 'ivan_i123@vk.com',
    sex: 2,
    verified: false,
    birthday: '01.01.2000',
  },
};
const zoomUser = { id: 'KDcuGIm1QgePTO8WbOqwIQ', display_name: 'Jill Chill', email: 'jchill@example.com', pic_url: 'https://example.com/photo.jpg', verified: 1 };
const zoomUnverifiedUser = { id: 'KDcuGIm1QgePTO8WbOqwIQ', display_name: 'Jill Chill', email: 'jchill@example.com', verified: 0 };

/** The expected profiles' `raw` is the very object the fake answered (or the id token's claims): the provider's own answer. */
export const quirkyProviderCases: ProviderCase[] = [
  {
    id: 'facebook',
    build: (fake) => facebookProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['email', 'public_profile'], pkce: false, loginHint: true },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'EAAGm0PX4ZCps', token_type: 'bearer', expires_in: 5183944 },
      expected: { accessToken: 'EAAGm0PX4ZCps', tokenType: 'bearer', refreshToken: null, scopes: [] },
    },
    profiles: [
      {
        name: 'a Graph user, the token first checked to be for this app',
        routes: { 'GET /debug_token': { json: debugToken(client.clientId) }, 'GET /user': bearerJson(graphMe) },
        profile: { id: '10160412345', email: 'ada@example.com', emailVerified: false, name: 'Ada Lovelace', image: 'https://platform-lookaside.fbsbx.com/p', raw: graphMe },
        check: (fake) => {
          const debug = fake.request('GET /debug_token');
          if (debug.query.get('input_token') !== 'access-token' || debug.query.get('access_token') !== `${client.clientId}|${client.clientSecret}`) {
            throw new Error('debug_token not asked with the app token about the user token');
          }
          if (fake.request('GET /user').query.get('fields') !== 'id,name,email,picture') throw new Error('Graph fields not asked for');
        },
      },
      {
        name: "a token issued to another app (it reads the same /me, so is refused)",
        routes: { 'GET /debug_token': { json: debugToken('another-app') }, 'GET /user': bearerJson(graphMe) },
        profile: null,
      },
      {
        name: 'a user who shares no email',
        routes: { 'GET /debug_token': { json: debugToken(client.clientId) }, 'GET /user': bearerJson(graphMeEmailless) },
        profile: { id: '10160412345', email: null, emailVerified: false, name: 'Ada Lovelace', image: 'https://platform-lookaside.fbsbx.com/p', raw: graphMeEmailless },
      },
      {
        name: 'a Limited Login id token (already verified), which asserts no email verification',
        routes: {},
        tokens: { accessToken: null, idToken: unsignedToken(limitedLoginClaims) },
        profile: { id: '10160412345', email: 'ada@example.com', emailVerified: false, name: 'Ada Lovelace', image: 'https://p', raw: limitedLoginClaims },
      },
    ],
  },
  {
    id: 'reddit',
    build: (fake) => redditProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['identity'], pkce: false, loginHint: false },
    token: {
      path: '/token',
      authentication: 'basic',
      headers: { 'user-agent': 'portcullis' },
      answer: { access_token: 'eyJhbGciOiJSUzI1NiIs', token_type: 'bearer', expires_in: 86400, refresh_token: '1234-abcd', scope: 'identity' },
      expected: { accessToken: 'eyJhbGciOiJSUzI1NiIs', refreshToken: '1234-abcd', scopes: ['identity'] },
    },
    profiles: [
      {
        name: 'a user, with the placeholder email no one receives',
        routes: { 'GET /user': bearerJson(redditUser) },
        // The placeholder email is ours, the answer Reddit's own (its icon URL still signed).
        profile: { id: 'abc123', email: 'abc123@reddit.invalid', emailVerified: false, name: 'spez', image: 'https://styles.redditmedia.com/t5_1/styles/profileIcon_x.png', raw: redditUser },
        check: (fake) => {
          if (fake.request('GET /user').headers['user-agent'] !== 'portcullis') throw new Error('Reddit needs a User-Agent');
        },
      },
    ],
  },
  {
    id: 'roblox',
    build: (fake) => robloxProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['openid', 'profile'], pkce: false, loginHint: false, params: { prompt: 'select_account consent' } },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'eyJhbGciOiJFUzI1', refresh_token: 'eyJhbGciOiJkaXIi', token_type: 'Bearer', expires_in: 899, id_token: 'eyJ.roblox', scope: 'openid profile' },
      expected: { accessToken: 'eyJhbGciOiJFUzI1', idToken: 'eyJ.roblox', scopes: ['openid', 'profile'] },
    },
    profiles: [
      {
        name: 'a user (Roblox gives no email)',
        routes: { 'GET /user': bearerJson(robloxUser) },
        profile: { id: '1516563360', email: null, emailVerified: false, name: 'exampleuser', image: 'https://tr.rbxcdn.com/x/150/150/AvatarHeadshot/Png', raw: robloxUser },
      },
    ],
  },
  {
    id: 'tiktok',
    build: (fake) => tiktokProvider(settingsAt(fake)),
    authorize: { path: '/authorize', clientIdParameter: 'client_key', defaultScopes: ['user.info.profile'], scopeSeparator: ',', pkce: false, loginHint: false },
    token: {
      path: '/token',
      authentication: 'post',
      clientIdParameter: 'client_key',
      answer: { access_token: 'act.example12345', expires_in: 86400, open_id: 'afd97af1-b87b-48b9', refresh_expires_in: 31536000, refresh_token: 'rft.example12345', scope: 'user.info.basic,user.info.profile', token_type: 'Bearer' },
      expected: { accessToken: 'act.example12345', refreshToken: 'rft.example12345', scopes: ['user.info.basic', 'user.info.profile'] },
    },
    profiles: [
      {
        name: 'a user (TikTok gives no email)',
        routes: { 'GET /user': bearerJson(tiktokAnswer) },
        profile: { id: 'afd97af1-b87b-48b9', email: null, emailVerified: false, name: 'Ada', image: 'https://p16.tiktokcdn.com/a.jpeg', raw: tiktokAnswer },
        check: (fake) => {
          if (fake.request('GET /user').query.get('fields') !== 'open_id,avatar_large_url,display_name,username') throw new Error('TikTok fields not asked for');
        },
      },
    ],
  },
  {
    id: 'twitter',
    build: (fake) => twitterProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['users.read', 'tweet.read', 'offline.access', 'users.email'], pkce: true, loginHint: false },
    token: {
      path: '/token',
      authentication: 'basic',
      answer: { token_type: 'bearer', expires_in: 7200, access_token: 'VGNibzFWSWREZm01bjN1N3dicWlNUG1oa2xRRVNNdmVHelJGY2hPWGxNd2dxOjE2MjIxNjA4MjU4MjU6MToxOmF0OjE', scope: 'users.read tweet.read offline.access users.email', refresh_token: 'bWRWa3gzdnk3WHRGU1o0bmRRcTJ5VUxWX1lZTDdJSUtmaWcxbTVxdEFXcW5tOjE2MjIxNjA4MjU4MjU6MToxOnJ0OjE' },
      expected: { tokenType: 'bearer', scopes: ['users.read', 'tweet.read', 'offline.access', 'users.email'] },
    },
    profiles: [
      {
        name: 'a user with a confirmed email',
        routes: {
          'GET /user': (request) =>
            request.query.get('user.fields') === 'confirmed_email'
              ? { json: { data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers', confirmed_email: 'dev@x.com' } } }
              : { json: twitterUser },
        },
        // The profile answer; the email answer only completes the email.
        profile: { id: '2244994945', email: 'dev@x.com', emailVerified: true, name: 'X Dev', image: 'https://pbs.twimg.com/profile_images/1/x_normal.jpg', raw: twitterUser },
      },
      {
        name: 'an app not granted the email (no email, not the username either)',
        routes: {
          'GET /user': (request) =>
            request.query.get('user.fields') === 'confirmed_email'
              ? { status: 403, json: { title: 'Forbidden' } }
              : { json: twitterImagelessUser },
        },
        profile: { id: '2244994945', email: null, emailVerified: false, name: 'X Dev', image: null, raw: twitterImagelessUser },
      },
    ],
  },
  {
    id: 'vk',
    build: (fake) => vkProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['email', 'phone'], pkce: true, loginHint: false },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { refresh_token: 'XXXXX', access_token: 'XXXXX', id_token: 'XXXXX', token_type: 'Bearer', expires_in: 3600, user_id: 1234567890, state: 'XXX', scope: 'email phone' },
      expected: { accessToken: 'XXXXX', refreshToken: 'XXXXX', scopes: ['email', 'phone'] },
    },
    profiles: [
      {
        name: 'a user with an email (VK does not say it is verified), asked with a form',
        routes: {
          'POST /user': (request) =>
            request.form.get('access_token') === 'access-token' && request.form.get('client_id') === client.clientId
              ? { json: vkAnswer }
              : { status: 400, json: { error: 'invalid_request' } },
        },
        profile: { id: '1234567890', email: 'ivan_i123@vk.com', emailVerified: false, name: 'Ivan Ivanov', image: 'https://pp.userapi.com/60tZWMo4SmwcploUVl9XEt8ufnTTvDUmQ6Bj1g/mmv1pcj63C4.png', raw: vkAnswer },
      },
      {
        name: 'a user without an email is not described',
        routes: { 'POST /user': { json: { user: { user_id: '1234567890', first_name: 'Ivan', last_name: 'Ivanov' } } } },
        profile: null,
      },
    ],
  },
  {
    id: 'zoom',
    build: (fake) => zoomProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: [], pkce: true, loginHint: false },
    token: { path: '/token', authentication: 'post', answer: { ...bearerToken, scope: 'user:read:user' }, expected: { ...bearerTokenParsed, scopes: ['user:read:user'] } },
    profiles: [
      {
        name: 'a verified user',
        routes: { 'GET /user': bearerJson(zoomUser) },
        profile: { id: 'KDcuGIm1QgePTO8WbOqwIQ', email: 'jchill@example.com', emailVerified: true, name: 'Jill Chill', image: 'https://example.com/photo.jpg', raw: zoomUser },
      },
      {
        name: 'an unverified user',
        routes: { 'GET /user': bearerJson(zoomUnverifiedUser) },
        profile: { id: 'KDcuGIm1QgePTO8WbOqwIQ', email: 'jchill@example.com', emailVerified: false, name: 'Jill Chill', image: null, raw: zoomUnverifiedUser },
      },
    ],
  },
];
