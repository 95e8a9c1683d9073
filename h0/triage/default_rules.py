"""The default `H0_Rules.md`: the text `h0 init` writes and the built-in rules H0 falls back to.

It lives in code (not only in the bundled vault) so an installed H0 has it too; a test
pins `vault/H0_Rules.md` to this exact text.
"""

from h0.vault.control import RULES_NOTE

RULES_FILENAME = RULES_NOTE

DEFAULT_RULES_TEXT = r"""---
type: h0-rules
tags: [h0]
---
# H0 triage rules

H0 reads this note to decide what to do with each email in `Needs_Action/` when
`LLM_PROVIDER=rules` (the default), and whenever an LLM gives no usable answer.
Edit the rules in the `yaml` block below; H0 picks up the change on the next email.
If the block is broken, H0 uses its built-in copy of the defaults and logs the problem.

## How a rule works

Rules are tried **top to bottom; the first rule that matches decides**.

| key | meaning |
| --- | --- |
| `name` | a label shown in the triage log |
| `when` | conditions (below); a rule without `when` matches every email |
| `match` | `any` (default): one condition is enough · `all`: every condition must match |
| `unless` | conditions that, if any matches, skip the rule |
| `decision` | `draft_reply`, `archive`, `needs_info`, `urgent` or `delegate` |
| `confidence` | 0 to 1 (default 0.7) |
| `reasoning` | one line for the log; placeholders allowed |
| `reply` | the draft body for `draft_reply` / `urgent`; placeholders allowed |
| `delegate_to` | who should handle it, for `delegate` |
| `enabled` | `false` switches a rule off without deleting it |

Conditions: `sender` (the whole From line), `sender_domain` (`example.com` also matches
`mail.example.com`), `subject`, `body`, `text` (subject or body), `recipients` (To and Cc),
`label`, `attachment`, `automated` (what kind of machine-made mail it is, told from its
headers: `auto_reply`, `bounce`, `list`, `notification`; empty for mail a person wrote) and
`asks` (the sentence of the sender's own words that asks you something — a question, a
request, a deadline for you — in English, German or French; empty when nothing does; quoted
history and signatures never count). Each takes one pattern or a list; one matching pattern is enough.
A pattern is a case-insensitive substring, or a regular expression between slashes:
`'/\bno-?reply@/'` (use single quotes around regular expressions). A regular expression
gets 100 ms per email; one that runs longer is skipped for that email and named here, in
the property `h0_rule_timeouts` (fix it, then delete the line).

Placeholders: `{greeting}` and `{sign_off}` (how you open and close a reply to this
person: as your last replies to them did, else as `H0_Profile.md` says), `{first_name}`,
`{sender_name}`, `{sender_address}`, `{sender_domain}`, `{subject}`, `{rule}`, `{matched}`
(the text that matched).

Example — put your own rules above the defaults so they win:

    - name: Recruiters go to Sam
      when:
        sender_domain: [linkedin.com, hired.com]
        subject: [opportunity, role]
      match: all
      decision: delegate
      delegate_to: Sam (hiring)
      reasoning: Recruiting mail from {sender_domain}

Whatever the rules say, H0 **never archives mail that looks financial or legal**
(invoices, payments, bank, tax, contracts, lawsuits, GDPR requests, refunds, …): such mail
stays in `Needs_Action/` (or becomes urgent). Nothing here can send mail: every draft waits
in `Drafts/` until you move it to `Approved/`.

## Rules

```yaml
rules:
  - name: Automated mail
    when:
      automated: '/.+/'
    decision: archive
    confidence: 0.9
    reasoning: Mail no person wrote to you ({matched}); it is owed no reply

  - name: Automated senders
    when:
      sender:
        - '/\b(no-?reply|do-?not-?reply|donotreply|mailer-daemon|postmaster|bounces?)@/'
        - '/\b(notifications?|newsletters?|news|marketing|promotions?|updates?)@/'
      label: [CATEGORY_PROMOTIONS, CATEGORY_SOCIAL, CATEGORY_FORUMS]
    decision: archive
    confidence: 0.9
    reasoning: Automated or bulk mail from {sender_address} ({matched})

  - name: Newsletters and marketing
    when:
      body:
        - unsubscribe
        - view this email in your browser
        - view in browser
        - manage your preferences
        - email preferences
        - you are receiving this email because
        - you received this email because
        - list-unsubscribe
      subject:
        - newsletter
        - weekly digest
        - '/\b\d{1,2}\s?% off\b/'
        - sale ends
        - limited time offer
    decision: archive
    confidence: 0.85
    reasoning: Looks like a newsletter or marketing ({matched})

  - name: Urgent requests
    when:
      text:
        - urgent
        - '/\ba\.?s\.?a\.?p\b/'
        - immediately
        - right away
        - time-sensitive
        - time sensitive
        - deadline today
        - due today
        - '/\bby (the )?end of (the )?day\b/'
        - '/\bby eod\b/'
    decision: urgent
    confidence: 0.8
    reasoning: Urgent wording ({matched}) from {sender_address}
    reply: |
      [H0 draft — edit before approving]
      {greeting}

      Thanks for flagging this. I've seen it and I'm on it; I'll get back to you shortly.

      {sign_off}

  - name: Questions and requests
    when:
      asks: '/.+/'
    decision: draft_reply
    confidence: 0.6
    reasoning: '{sender_address} asks: {matched}'
    reply: |
      [H0 draft — edit before approving]
      {greeting}

      {briefing}

      {sign_off}

  - name: Everything else
    decision: needs_info
    confidence: 0.5
    reasoning: No rule matched; a human should look at this
```
"""
