// Whether the sandbox suites can run here. They skip on a machine without bubblewrap, but CI
// installs it (.ci/run sets ACIA_TEST_REQUIRE_SANDBOX=1), so there a missing sandbox is a failure,
// not a silent skip: the escape suite must never pass by not running.
import { detectSandbox } from '../../src/core/sandbox/detect.js';

export function sandboxAvailable(): boolean {
  const detected = detectSandbox();
  if (detected.status === 'available') return true;
  if (process.env.ACIA_TEST_REQUIRE_SANDBOX === '1') {
    throw new Error(`ACIA_TEST_REQUIRE_SANDBOX=1 but no sandbox can start: ${JSON.stringify(detected)}`);
  }
  return false;
}
