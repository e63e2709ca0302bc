import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The local ports of the TCP sockets a process on this machine holds open (Linux: its descriptors in
 * /proc/<pid>/fd, matched by inode with /proc/net/tcp and tcp6): which process is on the other end of a
 * connection a test server accepted.
 */
export async function localTcpPortsOf(pid: number): Promise<Set<number>> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // sl, local_address (hex address:hex port), rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
      const local = fields[1];
      const inode = fields[9];
      if (local && inode && inodes.has(inode)) ports.add(Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}
