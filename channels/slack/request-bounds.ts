import type { IncomingMessage, ServerResponse } from 'node:http';

/** How far a request's `X-Slack-Request-Timestamp` may be from now, either way (Slack: 5 min). */
export const SLACK_MAX_CLOCK_SKEW_SECONDS = 5 * 60;

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Wraps an events listener so a request whose `X-Slack-Request-Timestamp` is more than five
 * minutes from now, in the past or in the future, gets 401 before its body is read or its
 * signature checked. Bolt refuses only stale timestamps; a request signed for the future could
 * be replayed until then. Requests without the header pass (Bolt refuses them unsigned).
 *
 * @example
 * ```ts
 * receiver.requestListener = refuseSkewedRequests(receiver.requestListener);
 * ```
 */
export function refuseSkewedRequests(
  listener: RequestListener,
  now: () => number = Date.now,
): RequestListener {
  return (req, res) => {
    const header = req.headers['x-slack-request-timestamp'];
    if (req.method === 'POST' && typeof header === 'string') {
      const seconds = Number(header);
      const skew = Math.abs(now() / 1000 - seconds);
      if (!Number.isFinite(seconds) || skew > SLACK_MAX_CLOCK_SKEW_SECONDS) {
        req.resume(); // discard the body unread
        res.writeHead(401, { 'content-type': 'text/plain' }).end('request timestamp out of range');
        return;
      }
    }
    listener(req, res);
  };
}
