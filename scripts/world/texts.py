"""What people write in the world, per language: questions (with dates, numbers, abbreviations), requests to
meet in many phrasings (with their length, days and part of day), news that asks nothing, and thanks.

Every text here is one sentence or line whose truth is known: a question is asked exactly as written;
a meeting request carries the minutes, the days (`DaySpec`) and the part of day a person reads in it.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a meeting request names its days, read from the email's date:
#   None: no day named; "today" / "tomorrow" / "this_week" / "next_week";
#   "wd:3" the next Thursday (0 = Monday); "wd:1,2" the next Tuesday or Wednesday; "nw:3" Thursday next week.
DaySpec = str | None


@dataclass(frozen=True)
class Question:
    text: str
    needs: tuple[str, ...] = ("person",)  # which notes answer it: person, project, meeting, rates


@dataclass(frozen=True)
class MeetingAsk:
    text: str  # the sentence(s) that ask
    minutes: int | None
    days: DaySpec
    part: str | None  # morning | afternoon | evening | None
    question: str | None = None  # the question it asks, exactly, when it is one


QUESTIONS: dict[str, tuple[Question, ...]] = {
    "en": (
        Question("Could you send me the updated quote by Friday?", ("project",)),
        Question("Is the launch still on for 18 March?", ("project",)),
        Question("What is your day rate for the workshop?", ("person", "rates")),
        Question("Can we move the review to 3 p.m. on Thursday?"),
        Question("Did you get invoice no. 2026-114 from us?"),
        Question("How many screens are in scope for v2?", ("project",)),
        Question("Is the beta launch on 18.12. still realistic?", ("project",)),
        Question("Could you confirm the budget of 38,000 EUR for phase 1?", ("project",)),
        Question("When do you expect the first designs?", ("project",)),
        Question("Who should we invite to the kick-off, e.g. from finance?"),
        Question("Would 1,100 EUR per day work for you?", ("person", "rates")),
        Question("Will the handover document be ready by the 9th?"),
    ),
    "de": (
        Question("Passt der Beta-Start am 18.12.?", ("project",)),
        Question("Kannst du mir das Angebot bis zum 9. schicken?", ("project",)),
        Question("Wie hoch ist dein Tagessatz für den Workshop?", ("person", "rates")),
        Question("Schaffst du die Entwürfe bis Ende KW 12?", ("project",)),
        Question("Ist die Rechnung Nr. 2026-114 schon raus?"),
        Question("Können wir den Termin auf 14 Uhr verschieben?"),
        Question("Gilt der Preis von 1.250 € noch?", ("rates",)),
        Question("Hast du z. B. die Logos schon bekommen?"),
        Question("Bleibt es beim Budget von 38.000 € für Phase 1?", ("project",)),
        Question("Wann bekommen wir die ersten Screens?", ("project",)),
        Question("Passt es dir am 9.?"),
        Question("Können Sie mir bitte die Lieferzeit bestätigen?"),
    ),
    "fr": (
        Question("Pouvez-vous m'envoyer le devis avant vendredi ?", ("project",)),
        Question("Le lancement est-il toujours prévu le 18 mars ?", ("project",)),
        Question("Quel est votre tarif journalier pour l'atelier ?", ("person", "rates")),
        Question("Est-ce que la facture n° 2026-114 est partie ?"),
        Question("Peut-on décaler la réunion à 15 h ?"),
        Question("Avez-vous reçu les maquettes, p. ex. la page d'accueil ?", ("project",)),
        Question("Le budget de 24 000 € tient-il toujours ?", ("project",)),
        Question("Quand pensez-vous livrer les premiers écrans ?", ("project",)),
        Question("Tu peux regarder le panier d'ici le 9 ?"),
        Question("C'est bon pour toi, le 18.12. ?"),
    ),
}

MEETINGS: dict[str, tuple[MeetingAsk, ...]] = {
    "en": (
        MeetingAsk(
            "Do you have time for a coffee next week?",
            None,
            "next_week",
            None,
            "Do you have time for a coffee next week?",
        ),
        MeetingAsk(
            "Could we do a quick 20 min call tomorrow?",
            20,
            "tomorrow",
            None,
            "Could we do a quick 20 min call tomorrow?",
        ),
        MeetingAsk(
            "Can we set up a one-hour call on Thursday to go through the flows?",
            60,
            "wd:3",
            None,
            "Can we set up a one-hour call on Thursday to go through the flows?",
        ),
        MeetingAsk(
            "Are you free Thursday afternoon for a chat?",
            None,
            "wd:3",
            "afternoon",
            "Are you free Thursday afternoon for a chat?",
        ),
        MeetingAsk(
            "Could we find 30 minutes next week to go through the designs?",
            30,
            "next_week",
            None,
            "Could we find 30 minutes next week to go through the designs?",
        ),
        MeetingAsk(
            "Would Tuesday or Wednesday morning work for a 45-minute call?",
            45,
            "wd:1,2",
            "morning",
            "Would Tuesday or Wednesday morning work for a 45-minute call?",
        ),
        MeetingAsk("Let's catch up over lunch on Friday.", None, "wd:4", None),
        MeetingAsk(
            "Can we hop on a call today? Half an hour should do.", 30, "today", None, "Can we hop on a call today?"
        ),
        MeetingAsk("I'd love to grab a coffee with you sometime this week.", None, "this_week", None),
        MeetingAsk(
            "Would you have an hour on Monday morning for a workshop?",
            60,
            "wd:0",
            "morning",
            "Would you have an hour on Monday morning for a workshop?",
        ),
    ),
    "de": (
        MeetingAsk(
            "Hast du Donnerstagnachmittag Zeit für ein kurzes Telefonat?",
            None,
            "wd:3",
            "afternoon",
            "Hast du Donnerstagnachmittag Zeit für ein kurzes Telefonat?",
        ),
        MeetingAsk(
            "Können wir uns nächste Woche auf einen Kaffee treffen?",
            None,
            "next_week",
            None,
            "Können wir uns nächste Woche auf einen Kaffee treffen?",
        ),
        MeetingAsk(
            "Hätten Sie am Dienstag eine Stunde Zeit für einen Termin?",
            60,
            "wd:1",
            None,
            "Hätten Sie am Dienstag eine Stunde Zeit für einen Termin?",
        ),
        MeetingAsk("Lass uns morgen kurz telefonieren, 15 Minuten reichen.", 15, "tomorrow", None),
        MeetingAsk(
            "Wann passt es dir diese Woche für einen Call?",
            None,
            "this_week",
            None,
            "Wann passt es dir diese Woche für einen Call?",
        ),
        MeetingAsk(
            "Passt dir Freitagvormittag für ein 30-minütiges Gespräch?",
            30,
            "wd:4",
            "morning",
            "Passt dir Freitagvormittag für ein 30-minütiges Gespräch?",
        ),
        MeetingAsk(
            "Sollen wir uns am Mittwochnachmittag für eine halbe Stunde zusammensetzen?",
            30,
            "wd:2",
            "afternoon",
            "Sollen wir uns am Mittwochnachmittag für eine halbe Stunde zusammensetzen?",
        ),
        MeetingAsk(
            "Können wir nächsten Montag eine Stunde telefonieren?",
            60,
            "nw:0",
            None,
            "Können wir nächsten Montag eine Stunde telefonieren?",
        ),
    ),
    "fr": (
        MeetingAsk(
            "Auriez-vous un créneau jeudi après-midi pour un appel d'une heure ?",
            60,
            "wd:3",
            "afternoon",
            "Auriez-vous un créneau jeudi après-midi pour un appel d'une heure ?",
        ),
        MeetingAsk(
            "On se prend un café la semaine prochaine ?",
            None,
            "next_week",
            None,
            "On se prend un café la semaine prochaine ?",
        ),
        MeetingAsk(
            "Est-ce qu'on peut s'appeler demain ? 20 minutes suffisent.",
            20,
            "tomorrow",
            None,
            "Est-ce qu'on peut s'appeler demain ?",
        ),
        MeetingAsk(
            "Seriez-vous disponible mardi matin pour une réunion ?",
            None,
            "wd:1",
            "morning",
            "Seriez-vous disponible mardi matin pour une réunion ?",
        ),
        MeetingAsk(
            "Pourrions-nous caler un rendez-vous de 30 minutes vendredi ?",
            30,
            "wd:4",
            None,
            "Pourrions-nous caler un rendez-vous de 30 minutes vendredi ?",
        ),
        MeetingAsk(
            "Tu as une demi-heure cette semaine pour en parler ?",
            30,
            "this_week",
            None,
            "Tu as une demi-heure cette semaine pour en parler ?",
        ),
    ),
}

# Sentences that set the scene and ask nothing (a "call" or "meeting" named, no request to meet).
CONTEXT: dict[str, tuple[str, ...]] = {
    "en": (
        "Thanks for the call yesterday, it helped a lot.",
        "I went through the flows with the team this morning.",
        "The meeting notes from Tuesday are in the shared folder.",
        "We signed off the budget internally.",
        "Marketing wants to see the onboarding screens first.",
        "Our board meeting moved to next month.",
    ),
    "de": (
        "Danke für das Gespräch gestern, das hat sehr geholfen.",
        "Ich habe die Entwürfe heute mit dem Team angeschaut.",
        "Das Protokoll vom Dienstag liegt im geteilten Ordner.",
        "Intern ist das Budget freigegeben.",
        "Der Vertrieb möchte zuerst die Startseite sehen.",
    ),
    "fr": (
        "Merci pour l'appel d'hier, c'était très utile.",
        "J'ai regardé les maquettes avec l'équipe ce matin.",
        "Le compte rendu de mardi est dans le dossier partagé.",
        "Le budget a été validé en interne.",
    ),
}

# A whole message that needs no answer: news, thanks, an answer that asks nothing back.
NO_REPLY: dict[str, tuple[str, ...]] = {
    "en": (
        "Got it, thanks!",
        "Perfect, that works for us. Talk soon.",
        "Just a heads-up: the files are on the drive now.",
        "FYI, the invoice was paid today.",
        "Thanks for the quick turnaround, the team loves it.",
    ),
    "de": (
        "Danke, passt so!",
        "Super, vielen Dank. Bis bald.",
        "Nur zur Info: Die Dateien liegen jetzt im Ordner.",
        "Die Rechnung ist heute überwiesen worden.",
    ),
    "fr": (
        "Merci, c'est noté !",
        "Parfait, merci beaucoup. À bientôt.",
        "Pour info : les fichiers sont sur le drive.",
        "La facture a été réglée aujourd'hui.",
    ),
}

# The owner's own words: answers, lists, and questions of hers.
ANSWERS: dict[str, tuple[str, ...]] = {
    "en": (
        "That works for me.",
        "I can send the updated quote by Friday.",
        "The launch date still stands.",
        "My day rate for workshops is 1,100 EUR.",
        "I'll share the first designs on Monday.",
        "Let's keep the scope at 14 screens for v2.",
        "Thursday at 3 p.m. is fine.",
    ),
    "de": (
        "Das passt mir gut.",
        "Das Angebot schicke ich dir bis Freitag.",
        "Der Beta-Start am 18.12. steht.",
        "Mein Tagessatz liegt bei 950 € netto.",
        "Die ersten Screens kommen am Montag.",
        "14 Uhr geht bei mir.",
    ),
    "fr": (
        "Cela me convient.",
        "Je vous envoie le devis avant vendredi.",
        "Le lancement du 18 mars tient toujours.",
        "Mon tarif journalier est de 900 €.",
        "Les premiers écrans arrivent lundi.",
    ),
}
LIST_ITEMS: dict[str, tuple[str, ...]] = {
    "en": ("onboarding flow", "pricing page", "empty states", "the settings screen", "icons and illustrations"),
    "de": ("Startseite", "Sendungsverfolgung", "Rechnungsansicht", "Login und SSO", "Fehlermeldungen"),
    "fr": ("page d'accueil", "fiche produit", "panier", "paiement", "pages légales"),
}
LIST_LEADS: dict[str, tuple[str, ...]] = {
    "en": ("Here is what I'd suggest:", "Next steps on my side:", "Three things from my side:"),
    "de": ("Mein Vorschlag:", "Nächste Schritte bei mir:", "Kurz zum Stand:"),
    "fr": ("Voici ce que je propose :", "Prochaines étapes de mon côté :", "Petit point :"),
}
AFTER_LIST: dict[str, tuple[str, ...]] = {
    "en": ("Everything else can wait until after the launch.", "I'll send the files once they're ready."),
    "de": ("Alles andere kann bis nach dem Start warten.", "Die Dateien schicke ich, sobald sie fertig sind."),
    "fr": ("Le reste peut attendre après le lancement.", "J'envoie les fichiers dès qu'ils sont prêts."),
}
OWNER_ASKS: dict[str, tuple[str, ...]] = {
    "en": (
        "Could you send me the final copy by Wednesday?",
        "Can you confirm the budget for phase 2?",
        "Let me know which of the two options you prefer.",
    ),
    "de": (
        "Kannst du mir die finalen Texte bis Mittwoch schicken?",
        "Könnt ihr mir das Budget für Phase 2 bestätigen?",
        "Sag mir bitte, welche Variante euch lieber ist.",
    ),
    "fr": (
        "Pouvez-vous m'envoyer les textes définitifs d'ici mercredi ?",
        "Pouvez-vous me confirmer le budget ?",
        "Dites-moi quelle option vous préférez.",
    ),
}
OWNER_NEWS: dict[str, tuple[str, ...]] = {
    "en": ("Quick update: the new screens are in the shared folder.", "The invoice for October is attached."),
    "de": ("Kurzes Update: Die neuen Screens liegen im Ordner.", "Anbei die Rechnung für Oktober."),
    "fr": ("Petit point : les nouveaux écrans sont dans le dossier.", "Vous trouverez ci-joint la facture d'octobre."),
}
SUBJECTS: dict[str, tuple[str, ...]] = {
    "en": (
        "Onboarding flows",
        "Quote for phase 2",
        "Beta launch",
        "Design review",
        "Workshop",
        "Invoice",
        "Next steps",
        "Screens for v2",
    ),
    "de": ("Angebot Phase 2", "Beta-Start", "Entwürfe Startseite", "Rechnung", "Termin", "Broschüre", "Workshop"),
    "fr": ("Devis", "Lancement boutique", "Maquettes", "Facture", "Réunion", "Panier"),
}
