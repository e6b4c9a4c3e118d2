// The workspace as the lower layers (fence, effects, backups) see it; it is resolved and registered
// from the configuration by lib/workspace/register-workspace.ts.

/** A workspace the gateway serves. */
export interface Workspace {
  id: string;
  /** Canonical root: `fs.realpath` of the configured root (a root behind a symlink is allowed). */
  root: string;
  /** The root as configured, before realpath (for messages and logs). */
  configuredRoot: string;
}
