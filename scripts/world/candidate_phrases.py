"""What a person labelling drafts knows about the owner's sentences (scripts/world/texts.py): the same sentence
in other words, in another language, and said the other way round. The labeller's knowledge, never H0's:
`h0 eval`'s judge (h0.drafting.sendready) is never given these.

Each entry: owner's sentence → (the same in other words, the same in another language, the opposite
answer or None when the sentence commits to nothing). "Another language" is English for German and French
replies and German for English ones.
"""

from __future__ import annotations

SENTENCES: dict[str, tuple[str, str, str | None]] = {
    # answers (texts.ANSWERS)
    "That works for me.": ("Sounds good to me.", "Das passt mir.", "Unfortunately that doesn't work for me."),
    "I can send the updated quote by Friday.": (
        "You'll have the updated quote from me by Friday.",
        "Das aktualisierte Angebot schicke ich bis Freitag.",
        "I won't be able to send the updated quote by Friday.",
    ),
    "The launch date still stands.": (
        "We're still on for the launch date.",
        "Der Starttermin steht weiterhin.",
        "The launch date has to move, unfortunately.",
    ),
    "My day rate for workshops is 1,100 EUR.": (
        "For workshops I charge 1,100 EUR per day.",
        "Mein Tagessatz für Workshops liegt bei 1.100 €.",
        None,
    ),
    "I'll share the first designs on Monday.": (
        "You'll see the first designs from me on Monday.",
        "Die ersten Entwürfe teile ich am Montag.",
        "I can't share the first designs on Monday.",
    ),
    "Let's keep the scope at 14 screens for v2.": (
        "For v2 I'd stay with 14 screens.",
        "Lass uns für v2 bei 14 Screens bleiben.",
        None,
    ),
    "Thursday at 3 p.m. is fine.": (
        "3 p.m. on Thursday suits me.",
        "Donnerstag um 15 Uhr passt.",
        "Thursday at 3 p.m. doesn't work for me.",
    ),
    "Das passt mir gut.": ("Das klappt bei mir.", "That suits me well.", "Das passt mir leider nicht."),
    "Das Angebot schicke ich dir bis Freitag.": (
        "Bis Freitag hast du das Angebot von mir.",
        "I'll send you the quote by Friday.",
        "Das Angebot schaffe ich bis Freitag nicht.",
    ),
    "Der Beta-Start am 18.12. steht.": (
        "Am 18.12. starten wir wie geplant mit der Beta.",
        "The beta start on 18 December stands.",
        "Der Beta-Start am 18.12. klappt leider nicht.",
    ),
    "Mein Tagessatz liegt bei 950 € netto.": ("Ich berechne 950 € netto pro Tag.", "My day rate is 950 € net.", None),
    "Die ersten Screens kommen am Montag.": (
        "Am Montag bekommst du die ersten Screens.",
        "The first screens will come on Monday.",
        "Die ersten Screens schaffe ich bis Montag nicht.",
    ),
    "14 Uhr geht bei mir.": ("Um 14 Uhr kann ich.", "2 p.m. works for me.", "14 Uhr geht bei mir leider nicht."),
    "Cela me convient.": ("Ça me va très bien.", "That works for me.", "Malheureusement, cela ne me convient pas."),
    "Je vous envoie le devis avant vendredi.": (
        "Vous aurez le devis avant vendredi.",
        "I'll send you the quote before Friday.",
        "Je ne pourrai pas vous envoyer le devis avant vendredi.",
    ),
    "Le lancement du 18 mars tient toujours.": (
        "On garde bien le lancement au 18 mars.",
        "The launch on 18 March still stands.",
        "Le lancement du 18 mars ne tient plus, malheureusement.",
    ),
    "Mon tarif journalier est de 900 €.": ("Je facture 900 € par jour.", "My day rate is 900 €.", None),
    "Les premiers écrans arrivent lundi.": (
        "Vous recevrez les premiers écrans lundi.",
        "The first screens arrive on Monday.",
        "Les premiers écrans ne seront malheureusement pas prêts lundi.",
    ),
    # what leads a list (texts.LIST_LEADS)
    "Here is what I'd suggest:": ("My suggestion:", "Mein Vorschlag:", None),
    "Next steps on my side:": ("On my end, next up:", "Nächste Schritte bei mir:", None),
    "Three things from my side:": ("A few things from me:", "Drei Punkte von meiner Seite:", None),
    "Mein Vorschlag:": ("Ich würde vorschlagen:", "My suggestion:", None),
    "Nächste Schritte bei mir:": ("Als Nächstes mache ich:", "Next steps on my side:", None),
    "Kurz zum Stand:": ("Der aktuelle Stand:", "A quick status:", None),
    "Voici ce que je propose :": ("Ma proposition :", "Here is what I suggest:", None),
    "Prochaines étapes de mon côté :": ("De mon côté, la suite :", "Next steps on my side:", None),
    "Petit point :": ("Où on en est :", "A quick update:", None),
    # after a list (texts.AFTER_LIST)
    "Everything else can wait until after the launch.": (
        "The rest can wait until we've launched.",
        "Alles andere kann bis nach dem Start warten.",
        None,
    ),
    "I'll send the files once they're ready.": (
        "The files follow as soon as they're done.",
        "Die Dateien schicke ich, sobald sie fertig sind.",
        None,
    ),
    "Alles andere kann bis nach dem Start warten.": (
        "Der Rest hat bis nach dem Start Zeit.",
        "Everything else can wait until after the launch.",
        None,
    ),
    "Die Dateien schicke ich, sobald sie fertig sind.": (
        "Sobald die Dateien fertig sind, schicke ich sie.",
        "I'll send the files once they're ready.",
        None,
    ),
    "Le reste peut attendre après le lancement.": (
        "Tout le reste attendra le lancement.",
        "The rest can wait until after the launch.",
        None,
    ),
    "J'envoie les fichiers dès qu'ils sont prêts.": (
        "Les fichiers suivent dès qu'ils sont prêts.",
        "I'll send the files as soon as they're ready.",
        None,
    ),
    # the owner's own asks (texts.OWNER_ASKS)
    "Could you send me the final copy by Wednesday?": (
        "Can I have the final copy by Wednesday?",
        "Kannst du mir die finalen Texte bis Mittwoch schicken?",
        None,
    ),
    "Can you confirm the budget for phase 2?": (
        "Could you confirm the phase 2 budget?",
        "Kannst du mir das Budget für Phase 2 bestätigen?",
        None,
    ),
    "Let me know which of the two options you prefer.": (
        "Which of the two options do you prefer?",
        "Sag mir bitte, welche der beiden Optionen dir lieber ist.",
        None,
    ),
    "Kannst du mir die finalen Texte bis Mittwoch schicken?": (
        "Schickst du mir die finalen Texte bis Mittwoch?",
        "Could you send me the final copy by Wednesday?",
        None,
    ),
    "Könnt ihr mir das Budget für Phase 2 bestätigen?": (
        "Bestätigt ihr mir noch das Budget für Phase 2?",
        "Can you confirm the budget for phase 2?",
        None,
    ),
    "Sag mir bitte, welche Variante euch lieber ist.": (
        "Welche Variante ist euch lieber?",
        "Let me know which option you prefer.",
        None,
    ),
    "Pouvez-vous m'envoyer les textes définitifs d'ici mercredi ?": (
        "Est-ce que je peux avoir les textes définitifs d'ici mercredi ?",
        "Could you send me the final copy by Wednesday?",
        None,
    ),
    "Pouvez-vous me confirmer le budget ?": (
        "Le budget est-il confirmé de votre côté ?",
        "Can you confirm the budget?",
        None,
    ),
    "Dites-moi quelle option vous préférez.": (
        "Quelle option préférez-vous ?",
        "Let me know which option you prefer.",
        None,
    ),
}

# List items (texts.LIST_ITEMS) in the other language; in other words they stay as they are (names of things).
ITEMS: dict[str, str] = {
    "onboarding flow": "Onboarding-Ablauf",
    "pricing page": "Preisseite",
    "empty states": "leere Zustände",
    "the settings screen": "die Einstellungsseite",
    "icons and illustrations": "Icons und Illustrationen",
    "Startseite": "home page",
    "Sendungsverfolgung": "shipment tracking",
    "Rechnungsansicht": "invoice view",
    "Login und SSO": "login and SSO",
    "Fehlermeldungen": "error messages",
    "page d'accueil": "home page",
    "fiche produit": "product page",
    "panier": "cart",
    "paiement": "payment",
    "pages légales": "legal pages",
}

# The greeting and sign-off in the other language, by the language it goes to ({first}: the person's first name).
GREETING = {"en": "Hi {first},", "de": "Hallo {first},", "fr": "Bonjour {first},"}
THANKS = {"en": "Thanks, {first}!", "de": "Danke, {first}!", "fr": "Merci, {first} !"}
SIGN_OFF = {"en": "Best,", "de": "Viele Grüße", "fr": "Bien à vous,"}

# A light edit of a greeting's first word or of a sign-off: what a person changes without thinking.
LIGHT_GREETING = {
    "Hi": "Hello",
    "Hello": "Hi",
    "Dear": "Hi",
    "Hey": "Hi",
    "Hallo": "Hi",
    "Lieber": "Hallo",
    "Liebe": "Hallo",
    "Salut": "Bonjour",
    "Chère": "Bonjour",
}
LIGHT_SIGN_OFF = {
    "Best,": "Best regards,",
    "Cheers,": "Best,",
    "Thanks,": "Thank you,",
    "Best regards,": "Best,",
    "All the best,": "Best,",
    "Kind regards,": "Best regards,",
    "Viele Grüße": "Beste Grüße",
    "Beste Grüße,": "Viele Grüße",
    "Liebe Grüße": "Viele Grüße",
    "LG": "Liebe Grüße",
    "Danke und viele Grüße": "Danke und beste Grüße",
    "Bien à vous,": "Cordialement,",
    "Cordialement,": "Bien à vous,",
    "Bonne journée,": "Belle journée,",
    "Belle journée,": "Bonne journée,",
    "Merci,": "Merci encore,",
}

# One line of ordinary courtesy (one stock phrase: a person sends it as it is), by language and register.
COURTESY = {
    ("en", False): "Let me know if you have any questions.",
    ("en", True): "Let me know if you have any questions.",
    ("de", False): "Melde dich gerne, wenn du Fragen hast.",
    ("de", True): "Bei Fragen melden Sie sich gerne.",
    ("fr", False): "Dis-moi si tu as des questions.",
    ("fr", True): "N'hésitez pas si vous avez des questions.",
}

# What a model pads a reply with (said before and after the owner's words), by language and register.
PADDING = {
    ("en", False): (
        "I hope this email finds you well and that you had a good start to the week.",
        (
            "Thank you again for reaching out about this. Please don't hesitate to get in touch if you have any "
            "further questions or if there is anything else I can do for you in the meantime. I'm always happy to "
            "help, and I'm really looking forward to continuing our collaboration on this."
        ),
    ),
    ("de", False): (
        "Ich hoffe, es geht dir gut und du hattest einen guten Start in die Woche.",
        (
            "Vielen Dank nochmals für deine Nachricht. Wenn du noch Fragen hast oder ich sonst irgendwie helfen kann, "
            "melde dich gerne jederzeit. Ich freue mich sehr auf die weitere Zusammenarbeit und bin gespannt, wie es "
            "mit dem Projekt weitergeht."
        ),
    ),
    ("de", True): (
        "Ich hoffe, es geht Ihnen gut und Sie hatten einen guten Start in die Woche.",
        (
            "Vielen Dank nochmals für Ihre Nachricht. Wenn Sie noch Fragen haben oder ich sonst irgendwie helfen kann, "
            "stehe ich Ihnen jederzeit gerne zur Verfügung. Ich freue mich sehr auf die weitere Zusammenarbeit und bin "
            "gespannt, wie es mit dem Projekt weitergeht."
        ),
    ),
    ("fr", False): (
        "J'espère que tu vas bien et que ta semaine a bien commencé.",
        (
            "Merci encore pour ton message. N'hésite pas à revenir vers moi si tu as la moindre question ou si je peux "
            "t'aider pour quoi que ce soit d'autre ; je suis vraiment ravie de travailler avec toi et j'ai hâte de voir "
            "la suite du projet."
        ),
    ),
    ("fr", True): (
        "J'espère que vous allez bien et que votre semaine a bien commencé.",
        (
            "Merci encore pour votre message. N'hésitez pas à revenir vers moi si vous avez la moindre question ou si je "
            "peux vous aider pour quoi que ce soit d'autre ; je reste à votre entière disposition et me réjouis de la "
            "suite de notre collaboration."
        ),
    ),
}
PADDING[("en", True)] = PADDING[("en", False)]

# A fact a model makes up when the owner's reply holds none (a deadline nobody agreed), by language.
INVENTED = {
    "en": "I can have it all done by 27 March.",
    "de": "Bis zum 27.3. bin ich damit durch.",
    "fr": "Je peux tout finir d'ici le 27 mars.",
}

WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "de": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi"),
}

# A fact-bearing sentence with one fact wrong (a model misreading a note), and with the fact left open.
WRONG: dict[str, str] = {
    "I can send the updated quote by Friday.": "I can send the updated quote by Thursday.",
    "My day rate for workshops is 1,100 EUR.": "My day rate for workshops is 1,300 EUR.",
    "I'll share the first designs on Monday.": "I'll share the first designs on Tuesday.",
    "Let's keep the scope at 14 screens for v2.": "Let's keep the scope at 18 screens for v2.",
    "Thursday at 3 p.m. is fine.": "Thursday at 4 p.m. is fine.",
    "Das Angebot schicke ich dir bis Freitag.": "Das Angebot schicke ich dir bis Mittwoch.",
    "Der Beta-Start am 18.12. steht.": "Der Beta-Start am 19.12. steht.",
    "Mein Tagessatz liegt bei 950 € netto.": "Mein Tagessatz liegt bei 1.050 € netto.",
    "Die ersten Screens kommen am Montag.": "Die ersten Screens kommen am Dienstag.",
    "14 Uhr geht bei mir.": "15 Uhr geht bei mir.",
    "Je vous envoie le devis avant vendredi.": "Je vous envoie le devis avant mercredi.",
    "Le lancement du 18 mars tient toujours.": "Le lancement du 25 mars tient toujours.",
    "Mon tarif journalier est de 900 €.": "Mon tarif journalier est de 850 €.",
    "Les premiers écrans arrivent lundi.": "Les premiers écrans arrivent jeudi.",
}
FILL: dict[str, str] = {
    "I can send the updated quote by Friday.": "I can send the updated quote by [FILL: day].",
    "My day rate for workshops is 1,100 EUR.": "My day rate for workshops is [FILL: day rate].",
    "I'll share the first designs on Monday.": "I'll share the first designs on [FILL: date].",
    "Let's keep the scope at 14 screens for v2.": "Let's keep the scope at [FILL: number] screens for v2.",
    "Thursday at 3 p.m. is fine.": "[FILL: day and time] is fine.",
    "Das Angebot schicke ich dir bis Freitag.": "Das Angebot schicke ich dir bis [FILL: Tag].",
    "Der Beta-Start am 18.12. steht.": "Der Beta-Start am [FILL: Datum] steht.",
    "Mein Tagessatz liegt bei 950 € netto.": "Mein Tagessatz liegt bei [FILL: Tagessatz] netto.",
    "Die ersten Screens kommen am Montag.": "Die ersten Screens kommen am [FILL: Tag].",
    "14 Uhr geht bei mir.": "[FILL: Uhrzeit] geht bei mir.",
    "Je vous envoie le devis avant vendredi.": "Je vous envoie le devis avant [FILL: jour].",
    "Le lancement du 18 mars tient toujours.": "Le lancement du [FILL: date] tient toujours.",
    "Mon tarif journalier est de 900 €.": "Mon tarif journalier est de [FILL: tarif].",
    "Les premiers écrans arrivent lundi.": "Les premiers écrans arrivent [FILL: jour].",
}
