/**
 * The studio's SQL that SQLite and Postgres both run as written, with `@name` parameters;
 * where the dialects differ, the caller passes its own fragment.
 */

/**
 * A turn as the pages show it: its speaker, and the turn it replies to. `column` names a
 * `messages` column a SQLite file written by an older colloquy may lack (`null as …` then);
 * `extra` columns are selected too.
 */
export function turnSelect(
  column: (name: string) => string = (name) => `m.${name}`,
  extra: readonly string[] = [],
): string {
  return `select ${extra.map((e) => `${e}, `).join('')}m.seq, m.id, m.conversation_id, m.participant_id, p.kind, p.display_name,
      m.content, m.timestamp, m.platform_message_id, m.edited_at, m.deleted_at,
      m.summary_for_agent_id, m.is_summary, m.metadata,
      ${column('delivery')}, ${column('reasoning')}, ${column('attachments')},
      ${column('delegated_by')}, ${column('delegated_to')},
      r.seq as reply_seq, r.conversation_id as reply_conversation_id,
      coalesce(rp.display_name, rp.id) as reply_name
    from messages m
    join participants p on p.id = m.participant_id
    left join messages r on m.reply_to_message_id is not null
      and r.channel_type = m.channel_type and r.channel_id = m.channel_id
      and r.platform_message_id = m.reply_to_message_id
    left join participants rp on rp.id = r.participant_id`;
}

/**
 * The common table `learned(id)`: a bot's platform ids (`slack:UBOT`) never write turns, so
 * they are learned from the mentions on the turns its agents replied to (`agents`, a condition
 * on the replying participant's id), the newest 5,000 replies, leaving out people's ids.
 */
export function learnedAliases(agents: string): string {
  return `learned(id) as (
    select distinct mm.participant_id from (
      select m.channel_type, m.channel_id, m.reply_to_message_id from conversations c
      join messages m on m.conversation_id = c.id and m.participant_id ${agents}
      where m.reply_to_message_id is not null
      order by m.timestamp desc limit 5000) r
    join messages q on q.channel_type = r.channel_type and q.channel_id = r.channel_id
      and q.platform_message_id = r.reply_to_message_id
    join message_mentions mm on mm.message_seq = q.seq
    where mm.participant_id not in (select id from participants where kind = 'user'))`;
}

/**
 * Turns among the newest `@window` that mentioned or replied to one of the bot's agents
 * (`ours`: their ids) and got no reply turn, nor an answered run (`answered`: the condition
 * on `m` saying a run answered it, empty when the database has no runs). `notSummary` is the
 * dialect's test on `m.is_summary`.
 */
export function unansweredSql(
  fragments: { ours: string; notSummary: string; answered: string },
  column?: (name: string) => string,
): string {
  const { ours, notSummary, answered } = fragments;
  return `with ours(id) as (${ours}),
    ${learnedAliases('in (select id from ours)')},
    aliases(id) as (select id from ours union select id from learned)
    ${turnSelect(column)}
    where m.seq > (select max(seq) from messages) - @window
      and m.deleted_at is null and ${notSummary}
      and m.participant_id not in (select id from ours)
      and (m.reply_to_participant_id in (select id from ours)
           or exists (select 1 from message_mentions mm where mm.message_seq = m.seq
                      and mm.participant_id in (select id from aliases)))
      and not exists (select 1 from messages r
        where r.conversation_id = m.conversation_id
          and r.reply_to_participant_id = m.participant_id
          and r.timestamp >= m.timestamp
          and r.reply_to_message_id = m.platform_message_id
          and r.participant_id in (select id from ours))
      ${answered === '' ? '' : `and not (${answered})`}
    order by m.seq desc limit @limit`;
}

/**
 * One person and what forgetting them would touch; `@id` is their id, `isSummary` the
 * dialect's test on `s.is_summary`, `theirs` the query of their turns (`seq`,
 * `conversation_id`): by default each conversation's turns by author, which Postgres indexes.
 */
export function participantSql(
  isSummary: string,
  theirs = `select m.seq, m.conversation_id from conversations c
      join messages m on m.conversation_id = c.id and m.participant_id = @id`,
): string {
  return `with theirs as materialized (${theirs})
    select p.id, p.kind, p.display_name, p.last_seen_at,
      (select count(*) from theirs) as messages,
      (select count(distinct conversation_id) from theirs) as conversations,
      (select count(*) from message_revisions r where r.message_seq in
        (select seq from theirs)) as revisions,
      (select count(*) from message_mentions mm where mm.participant_id = p.id) as mentions,
      (select count(*) from messages s where ${isSummary} and s.conversation_id in
        (select conversation_id from theirs)) as summaries
    from participants p where p.id = @id`;
}
