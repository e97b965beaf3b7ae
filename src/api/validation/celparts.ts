// What the server takes from the CEL interpreter (cel/), gathered in one
// module that is imported on first need (engines.ts), never at start: every
// static import of a cel/ module would load the interpreter, @bufbuild/cel
// and the protobuf runtime under it with the server.

export { compileRule, compileRules } from './cel/rules.js';
export { compileExpression, jsonToCel } from './cel/program.js';
export { authorizerValue, awaitingAnswer, withAuthorizationAnswers } from './cel/authz.js';
export { JsonList, JsonMap } from './cel/jsonvalues.js';
export { parseCel } from './cel/parser.js';
export { cardinalityOf, costErrorMessage, costLimits, estimateCost, ruleCost } from './cel/cost.js';
