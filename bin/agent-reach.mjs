#!/usr/bin/env node
/**
 * agent-reach: the command-line door of Agent Reach (plain ESM, runs without a build:
 * `npx agent-reach …` in the repository, or `node bin/agent-reach.mjs …`). See lib/cli/main.mjs
 * and docs/AGENTS.md.
 */
import { main } from "../lib/cli/main.mjs";

process.exitCode = await main(process.argv.slice(2));
