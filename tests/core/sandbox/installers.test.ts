// Which commands install dependencies (the runners give them the task's own copies first), and which
// failed installs could not reach a registry (the dev task then asks the human instead of going on).
import { describe, expect, it } from 'vitest';
import { NO_NETWORK_NOTE, registryUnreachable, runsInstaller, runsNodeInstaller, runsPipInstaller, runsPnpmInstaller } from '../../../src/core/sandbox/installers.js';

describe('installer commands', () => {
  it('recognises npm, Yarn 1 and pip installers anywhere in a shell line, and nothing else', () => {
    for (const c of ['npm install', 'npm i kleur', 'npm --prefix x add kleur', 'cd pkg && npm ci', 'yarn add kleur@4', 'yarn --cwd a remove x', 'true; yarn install --frozen-lockfile']) {
      expect(runsNodeInstaller(c), c).toBe(true);
    }
    for (const c of ['npm test', 'npm run install-hooks', 'yarn test', 'yarn', 'pnpm add x', 'npminstall', 'npm run build -- install']) {
      expect(runsNodeInstaller(c), c).toBe(false);
    }
    for (const c of ['pip install x', 'pip3 install -r requirements.txt', '.venv/bin/pip install x', '.venv/bin/python -m pip install x', 'python3 -m pip uninstall -y x', 'python -I -m pip install x', 'uv pip install x', 'cd a && /usr/bin/pip3.11 install x']) {
      expect(runsPipInstaller(c), c).toBe(true);
    }
    for (const c of ['pip list', 'python -m pytest', 'pip freeze > requirements.txt', 'pipx install x', 'python -m pipinstall']) {
      expect(runsPipInstaller(c), c).toBe(false);
    }
    for (const c of ['pnpm add x', 'pnpm --filter a add x', 'pnpm install --frozen-lockfile', 'pnpm i']) expect(runsPnpmInstaller(c), c).toBe(true);
    for (const c of ['pnpm test', 'pnpm -r test', 'pnpm run add']) expect(runsPnpmInstaller(c), c).toBe(false);
    for (const c of ['pnpm add x', 'bun add x', 'poetry add x', 'uv add x', 'npm i', 'pip install x']) expect(runsInstaller(c), c).toBe(true);
    for (const c of ['pnpm test', 'bun test', 'poetry run pytest', 'uv run pytest']) expect(runsInstaller(c), c).toBe(false);
  });
});

describe('registryUnreachable', () => {
  it("finds the line that shows no registry was reached, the tool's own first", () => {
    expect(registryUnreachable('npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/kleur failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\n')).toBe('npm error code EAI_AGAIN');
    expect(registryUnreachable("WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(...: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/x/")).toMatch(/^WARNING: Retrying/);
    expect(registryUnreachable("ERROR: Could not find a version that satisfies the requirement x (from versions: none)\n" + NO_NETWORK_NOTE)).toBe(NO_NETWORK_NOTE);
    expect(registryUnreachable('acia sandbox: registry.npmjs.org:443 is not in allowedHosts')).toMatch(/allowedHosts/);
    // A package that does not exist, on a registry that answered, is the agent's to handle.
    expect(registryUnreachable("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/no-such-pkg - Not found")).toBeNull();
    expect(registryUnreachable('ERROR: No matching distribution found for no-such-pkg')).toBeNull();
  });
});
