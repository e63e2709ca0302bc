import type { FastifyInstance } from 'fastify';

export interface ListedRoute {
  readonly method: string;
  readonly url: string;
}

/**
 * Every route of an app and each of its methods, from the app itself. fastify prints them as a tree in which
 * a route's path continues the path of the route it is indented under (`/`, then `api/auth/ok` beneath it).
 */
export function listedRoutes(app: FastifyInstance): ListedRoute[] {
  const routes: ListedRoute[] = [];
  const pathAtDepth: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const parent = depth > 0 ? pathAtDepth[depth - 1]! : '';
    // fastify prints `/console/*` as `*` beneath `/console`, dropping the slash of the wildcard's segment.
    const url = parent + (match[2] === '*' && !parent.endsWith('/') ? '/*' : match[2]!);
    pathAtDepth.length = depth;
    pathAtDepth.push(url);
    for (const method of match[3]!.split(',').map((m) => m.trim())) routes.push({ method, url });
  }
  return routes;
}
