"""pynetdicom_fixes.py - a work-around for pynetdicom 3.0.4, imported by the pynetdicom peers in scripts/.

keep_awaited_responses(): in a requestor, pynetdicom's send_c_store() (and the other send_*() calls)
pauses the association's reactor thread before it sends, so that the reactor does not take the
response off the DIMSE message queue. The pause is a flag the reactor sets before it waits
(Association._is_paused), and the flag is still set from the previous pause when the next send_*()
call starts; if the reactor thread has not run since it was woken, the next call sends at once, the
reactor then takes the answer off the queue and drops it ("Received unexpected C-STORE service
message"), and send_c_store() waits out its DIMSE timeout. A fast peer on a loaded machine makes
this likely: a test of px's receiver saw a C-STORE-RSP that px had sent (and the sender's socket had
read) never reach send_c_store().

While a send_*() call waits (the reactor checkpoint is cleared), a response the reactor takes is put
back at the head of the queue, where the waiting call finds it. Requests are served as before, and a
response nobody waits for is still dropped with pynetdicom's warning.
"""

from pynetdicom.association import Association

_serve_request = Association._serve_request


def _serve_request_keeping_responses(self, msg, context_id):
    if not msg.is_valid_request and not self._reactor_checkpoint.is_set():
        queue = self.dimse.msg_queue
        with queue.mutex:
            queue.queue.appendleft((context_id, msg))
            queue.unfinished_tasks += 1
            queue.not_empty.notify()
        return
    _serve_request(self, msg, context_id)


def keep_awaited_responses():
    """Applies the work-around to every Association of this process (idempotent)."""
    Association._serve_request = _serve_request_keeping_responses
