// Which files of a model's patch decide how an instance's tests run, and so are graded from the base and
// the test patch instead: test files and directories, runner config, what the test command names, and the
// test parts of manifests that also hold other things.
import { describe, expect, it } from 'vitest';
import { decidesTests, filesNamedBy } from '../../src/eval/test-inputs.js';
import { filesOfPatch } from '../../src/eval/grade.js';

const none = new Set<string>();
const changed = (path: string, named: ReadonlySet<string> = none) => decidesTests(path, 'a', 'b', named);

describe('the files that decide how tests run', () => {
  it('covers test files, test directories, runner config and what every test loads first', () => {
    for (const p of [
      'test/add.test.js', 'tests/helpers.py', 'src/__tests__/x.js', 'spec/a_spec.rb', 'lib/add.spec.ts', 'pkg/add_test.go', 'test_add.py', 'pkg/test_add.py', 'add_test.py',
      'conftest.py', 'src/conftest.py', 'pytest.ini', 'tox.ini', 'noxfile.py', '.coveragerc', 'jest.config.js', 'jest.setup.ts', 'vitest.config.mts', 'vite.config.ts', 'vitest.workspace.ts',
      '.mocharc.yml', '.mocharc', '.nycrc.json', '.taprc', 'karma.conf.js', 'babel.config.js', '.babelrc', '.npmrc', 'node_modules/tap/index.js', '.pnp.cjs', '.yarn/cache/x.zip',
      'sitecustomize.py', 'lib/python/usercustomize.py', 'evil.pth',
    ]) {
      expect(changed(p), p).toBe(true);
    }
    for (const p of ['index.js', 'src/add.js', 'lib/testing-utils.txt', 'README.md', 'src/contest.py', 'tsconfig.json', 'attest.js']) expect(changed(p), p).toBe(false);
  });

  it('takes the files and directories the test command names, and a build tool’s own files', () => {
    expect([...filesNamedBy('node run-tests.js --verbose')]).toEqual(['run-tests.js']);
    expect(filesNamedBy('node --test --test-reporter=tap test/')).toContain('test');
    expect(filesNamedBy('bash ./scripts/check.sh && make check')).toEqual(new Set(['scripts/check.sh', 'Makefile', 'makefile', 'GNUmakefile']));
    expect([...filesNamedBy('cat /etc/passwd ../up $HOME/x')]).toEqual([]);
    const named = filesNamedBy('node run-tests.js && ./ci/test.sh');
    expect(changed('run-tests.js', named)).toBe(true);
    expect(changed('ci/test.sh', named)).toBe(true);
    expect(changed('ci/other.sh', named)).toBe(false);
    expect(changed('lib/runner.js', filesNamedBy('node --test lib/'))).toBe(true);
  });

  it('counts a package.json change only when its scripts or test runner settings change', () => {
    const pkg = (o: object) => JSON.stringify({ name: 'x', scripts: { test: 'node --test' }, ...o });
    expect(decidesTests('package.json', pkg({}), pkg({ description: 'y', dependencies: { a: '1' } }), none)).toBe(false);
    expect(decidesTests('package.json', pkg({}), pkg({ scripts: { test: 'echo ok' } }), none)).toBe(true);
    expect(decidesTests('package.json', pkg({}), pkg({ scripts: { test: 'node --test', pretest: 'x' } }), none)).toBe(true);
    expect(decidesTests('package.json', pkg({}), pkg({ jest: { setupFiles: ['x'] } }), none)).toBe(true);
    expect(decidesTests('package.json', pkg({}), pkg({ type: 'module' }), none)).toBe(true);
    expect(decidesTests('package.json', pkg({}), '{ not json', none)).toBe(true);
    expect(decidesTests('sub/package.json', null, pkg({}), none)).toBe(true);
    expect(decidesTests('sub/package.json', null, JSON.stringify({ name: 'lib' }), none)).toBe(false);
  });

  it('counts a pyproject.toml or setup.cfg change only in its test runner tables', () => {
    const toml = (extra: string) => `[project]\nname = "x"\ndependencies = ["a"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n${extra}`;
    expect(decidesTests('pyproject.toml', toml(''), `${toml('')}\n[tool.black]\nline-length = 100\n`, none)).toBe(false);
    expect(decidesTests('pyproject.toml', toml(''), toml('').replace('"a"', '"a", "b"'), none)).toBe(false);
    expect(decidesTests('pyproject.toml', toml(''), toml('').replace('-q', '-q -p no:cacheprovider --co'), none)).toBe(true);
    expect(decidesTests('pyproject.toml', toml(''), `tool.pytest.ini_options.addopts = "-x"\n${toml('')}`, none)).toBe(true);
    expect(decidesTests('pyproject.toml', toml(''), `${toml('')}\n[tool.coverage.run]\nomit = ["*"]\n`, none)).toBe(true);
    const cfg = '[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n';
    expect(decidesTests('setup.cfg', cfg, cfg.replace('name = x', 'name = y'), none)).toBe(false);
    expect(decidesTests('setup.cfg', cfg, cfg.replace('-q', '-q --deselect t'), none)).toBe(true);
  });

  it('reads the paths a unified diff touches', () => {
    const patch = 'diff --git a/test/a.test.js b/test/a.test.js\nnew file mode 100644\n--- /dev/null\n+++ b/test/a.test.js\n@@ -0,0 +1 @@\n+x\ndiff --git a/conftest.py b/conftest.py\n--- a/conftest.py\n+++ b/conftest.py\n';
    expect([...filesOfPatch(patch)].sort()).toEqual(['conftest.py', 'test/a.test.js']);
  });
});
