import { streams } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { UserPorts } from './ports.ts';
import { decideUpdateUser, userModel, type UpdateUser } from '../identity/user.decider.ts';
import { moveUsernameReservation } from '../identity/username-claim.ts';

/**
 * update-user: the caller's name, image and username fields (`decideUpdateUser`); a new username is claimed
 * in the same append (refused when taken) and the old one released. The username's rules are the caller's check.
 */
export async function updateUser(ports: Pick<UserPorts, 'commands'>, request: RequestMetadata, command: { readonly userId: string; readonly changes: UpdateUser }): Promise<void> {
  const { userId } = command;
  await ports.commands.handle({ name: 'update-user', request, actorId: userId, serialize: [streams.user(userId)] }, async (unit) => {
    const user = await unit.load(streams.user(userId), userModel);
    const events = decideUpdateUser(command.changes, user.state);
    unit.append(user.streamId, events);
    const renamed = events.find((e) => e.type === 'user.username_changed.v1');
    if (renamed && user.state.status === 'registered') {
      await moveUsernameReservation(unit, { userId, from: user.state.username, to: renamed.data.username });
    }
  });
}
