// Who asks, as a ledger records a local human's request (`acia cancel`, `acia say`): `<user>@<host>`.
import { hostname, userInfo } from 'node:os';

export function whoAmI(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    // No passwd entry for this uid (a container): the uid still says who.
    return `uid ${process.getuid?.() ?? '?'}@${hostname()}`;
  }
}
