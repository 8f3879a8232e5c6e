// What an agent may propose for the team's memory: a few short, durable lessons about the repository.
// They are model-written text that the next run's PM will read, so they are bounded here and cleaned
// again (one line each, no markup that could pose as structure) before they reach the page.
import { z } from 'zod';

export const MAX_LESSONS_PER_RESULT = 3;
export const MAX_LESSON_CHARS = 300;

export const Lessons = z
  .array(z.string().min(1).max(MAX_LESSON_CHARS))
  .max(MAX_LESSONS_PER_RESULT)
  .describe(
    `Optional: up to ${MAX_LESSONS_PER_RESULT} durable lessons about this repository for future runs (a convention, a pitfall, a command that works), one sentence each. Not a summary of this task.`,
  );
