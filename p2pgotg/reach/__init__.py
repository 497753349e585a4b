"""Reaching a peer, as pure codecs over bytes and text: invite candidates and their text
form, short codes and their PAKE, reply codes, and the STUN, NAT-PMP and PCP messages.

Like ``protocol``, nothing here does I/O, sleeps or reads a clock (time is passed in), so
the codecs are checked against SPEC chapter 3's vectors alone; ``net`` sends and receives
them. They are apart from ``protocol`` because no game message needs them.
"""
