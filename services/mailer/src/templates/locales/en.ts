import { framedMail, lifetimeIn, type MailFrame, type ShippedLocale } from './layout.ts';

const frame: MailFrame = {
  language: 'en',
  greeting: 'Hello{{#name}} {{name}}{{/name}},',
  orOpenThisLink: 'Or open this link:',
  signature: '— {{productName}}',
};
const linkExpiry = 'This link expires in {{expiresIn}} (at {{expiresAt}}).';

export const english: ShippedLocale = {
  templates: {
    verification: framedMail(frame, {
      subject: 'Verify your email address for {{productName}}',
      intro: 'Please confirm that {{to}} is your email address for your {{productName}} account.',
      action: 'Verify email address',
      expiry: linkExpiry,
      outro: 'If you did not create a {{productName}} account, you can ignore this mail.',
    }),
    'password-reset': framedMail(frame, {
      subject: 'Reset your {{productName}} password',
      intro: 'Someone asked to reset the password of the {{productName}} account for {{to}}.',
      action: 'Choose a new password',
      expiry: linkExpiry,
      outro: 'If it was not you, ignore this mail: your password stays as it is.',
    }),
    'change-email': framedMail(frame, {
      subject: 'Confirm the change of your {{productName}} email address',
      intro:
        'You asked to change the email address of your {{productName}} account from {{to}} to {{#newEmail}}{{newEmail}}{{/newEmail}}{{^newEmail}}a new address{{/newEmail}}.',
      action: 'Confirm the change',
      expiry: linkExpiry,
      outro: 'After you confirm, we send a verification link to the new address. If it was not you, ignore this mail.',
    }),
    'delete-account': framedMail(frame, {
      subject: 'Confirm the deletion of your {{productName}} account',
      intro: 'You asked to delete your {{productName}} account ({{to}}). This cannot be undone.',
      action: 'Delete my account',
      expiry: linkExpiry,
      outro: 'If it was not you, ignore this mail and consider changing your password.',
    }),
    // An invitation job may come without its details (an optional field): then organizationName is empty.
    invitation: framedMail(frame, {
      subject:
        '{{#organizationName}}{{inviter}} invited you to join {{organizationName}} on {{productName}}{{/organizationName}}{{^organizationName}}You are invited to an organization on {{productName}}{{/organizationName}}',
      intro:
        '{{#organizationName}}{{inviterWithEmail}} invited you to join the organization {{organizationName}} on {{productName}}, with {{#role}}the role {{role}}{{/role}}{{#severalRoles}}the roles {{severalRoles}}{{/severalRoles}}{{^roles}}no role{{/roles}}.{{/organizationName}}{{^organizationName}}You have been invited to join an organization on {{productName}}.{{/organizationName}}',
      action: '{{#organizationName}}Join {{organizationName}}{{/organizationName}}{{^organizationName}}View the invitation{{/organizationName}}',
      expiry: 'This invitation expires in {{expiresIn}} (at {{expiresAt}}).',
      outro: 'The invitation is for {{to}}: accept it signed in with that address. If you did not expect it, you can ignore this mail.',
    }),
  },
  describeLifetime: lifetimeIn({ hour: ['hour', 'hours'], minute: ['minute', 'minutes'], second: ['second', 'seconds'] }),
  formatInstant: (at) => at.toUTCString(),
  and: 'and',
};
