"""The declared domains of the executed steps (audiomind.reasoning.steps): a decision made by taking a step is
named `step:KIND`, and its competence is judged against what the step does, as a verifier's is."""

from __future__ import annotations

from audiomind.reasoning.verifiers.base import declare

declare("step:day_offset", function="counts days on or back from the one weekday said",
        supports=["which day it is a stated number of days after or before the day mentioned"],
        not_for=["which day is said", "how many days there are between two days"],
        examples=["What day is it three days after the one mentioned?", "If it is moved back a day, which day is that?",
                  "What day comes two days later than the day in the message?",
                  "Which day was the day before the one the speaker names?"])
declare("step:sum", function="adds the quantities said",
        supports=["the total of amounts, prices or counts that are said"],
        not_for=["one amount that is said", "the difference between amounts"],
        examples=["How much does everything cost altogether?", "What is the total of the amounts mentioned?",
                  "How many are there in all, adding up what is said?", "What do the items come to together?"])
declare("step:mean", function="averages the quantities said",
        supports=["the average of the values that are said"],
        not_for=["the total of the values", "the largest or smallest value"],
        examples=["What is the average of the numbers mentioned?", "On average, how much is each?",
                  "What is the mean of the values the speaker gives?", "What is the typical amount, averaging them?"])
declare("step:difference", function="subtracts one quantity said from another",
        supports=["how much more or fewer one amount is than another that is said"],
        not_for=["the total of the amounts", "one amount that is said"],
        examples=["How many more does the first have than the second?", "What is the difference between the two amounts?",
                  "How much cheaper is one than the other?", "By how much do the two numbers differ?"])
declare("step:remainder", function="takes the quantities used or removed from a starting quantity said",
        supports=["how many or how much is left after some is used, sold or taken away"],
        not_for=["the total of the amounts", "how many there were at the start"],
        examples=["How many are left after some are taken?", "How much money remains after paying?",
                  "What is left over once the rest are gone?", "How many will remain afterwards?"])
declare("step:extreme", function="finds the greatest or least of the values said, or what it was said of",
        supports=["which value said is the largest or the smallest", "which thing said has the most or the least"],
        not_for=["the total of the values", "which value is said first"],
        examples=["Which is the most expensive of the items mentioned?", "What is the highest number said?",
                  "Which one has the fewest according to the speaker?", "Which is the cheapest option described?"])
declare("step:opposite", function="finds the opposite of the adjective said (WordNet antonyms)",
        supports=["the opposite of a word that is said"],
        not_for=["a synonym of the word", "what the word means"],
        examples=["What is the opposite of the word the speaker uses?", "Which word means the reverse of what is said?",
                  "What is the antonym of the describing word spoken?", "Which is the contrary of the word heard?"])
declare("step:pause_length", function="measures the silence between two utterances",
        supports=["how long the pause between the speakers or sentences is"],
        not_for=["how long the speech lasts", "how many pauses there are"],
        examples=["How long is the pause between the two sentences?", "How much silence is there before the reply?",
                  "How many seconds pass between the question and the answer?", "How long does the speaker pause?"])
