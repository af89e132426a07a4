/**
 * `GET /sim/v1/judge` (docs/judge.md): what the judge found, counted per rule since start, the last
 * findings with their evidence, and the rules themselves, so a reader of the findings need not look
 * them up elsewhere.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { JudgeLog } from '../judge/judge-log.js';
import { JUDGE_RULES } from '../judge/rule-catalogue.js';
import { JudgeReplySchema } from './wire-schemas.js';

export const judgeRoutes: FastifyPluginAsyncTypebox<{ judge?: JudgeLog }> = async (plane, options) => {
  plane.get('/judge', { schema: { tags: ['control'], operationId: 'getJudge', summary: 'What the judge found: counts per rule, the last findings, the rules', response: { 200: JudgeReplySchema } } }, async () => {
    const judge = options.judge;
    return { summary: judge?.summary() ?? {}, findings: judge?.findings() ?? [], rules: [...JUDGE_RULES] };
  });
};
