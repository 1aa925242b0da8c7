; quickbooks: the nine APIs as actions, plus get_info_api to ask for a missing value.
; A call object stands for one goal of the request; var objects are its arguments and its output.
; An argument can be used once it has a value: given in the request (init), asked for (get_info_api),
; or produced by another call (dataflow: the output var is the argument, typed for it in the task).
(define (domain quickbooks)
  (:requirements :strips :typing)
  (:types call var argtype)
  (:constants
    start_date end_date charge_date charge_amount help_topic contact_topic contact_channel
    invoice_amount invoice_detail customer_given_name customer_family_name customer_email
    customer_phone - argtype)
  (:predicates
    (has_type ?v - var ?t - argtype)
    (has_value ?v - var)
    (askable ?v - var)
    (arg1 ?c - call ?v - var)
    (arg2 ?c - call ?v - var)
    (arg3 ?c - call ?v - var)
    (arg4 ?c - call ?v - var)
    (output ?c - call ?v - var)
    (done ?c - call)
    (wants_profit_loss ?c - call)
    (wants_expense_spend ?c - call)
    (wants_invoice_sales ?c - call)
    (wants_charge_lookup ?c - call)
    (wants_help ?c - call)
    (wants_contact_us ?c - call)
    (wants_advice ?c - call)
    (wants_create_invoice ?c - call)
    (wants_update_customer ?c - call))

  (:action get_info_api
    :parameters (?v - var ?t - argtype)
    :precondition (and (askable ?v) (has_type ?v ?t))
    :effect (and (has_value ?v) (not (askable ?v))))

  (:action profit_loss_api
    :parameters (?c - call ?start - var ?end - var ?out - var)
    :precondition (and (wants_profit_loss ?c) (arg1 ?c ?start) (arg2 ?c ?end) (output ?c ?out)
                       (has_type ?start start_date) (has_type ?end end_date)
                       (has_value ?start) (has_value ?end))
    :effect (and (done ?c) (has_value ?out) (not (wants_profit_loss ?c))))

  (:action expense_spend_api
    :parameters (?c - call ?start - var ?end - var ?out - var)
    :precondition (and (wants_expense_spend ?c) (arg1 ?c ?start) (arg2 ?c ?end) (output ?c ?out)
                       (has_type ?start start_date) (has_type ?end end_date)
                       (has_value ?start) (has_value ?end))
    :effect (and (done ?c) (has_value ?out) (not (wants_expense_spend ?c))))

  (:action invoice_sales_api
    :parameters (?c - call ?start - var ?end - var ?out - var)
    :precondition (and (wants_invoice_sales ?c) (arg1 ?c ?start) (arg2 ?c ?end) (output ?c ?out)
                       (has_type ?start start_date) (has_type ?end end_date)
                       (has_value ?start) (has_value ?end))
    :effect (and (done ?c) (has_value ?out) (not (wants_invoice_sales ?c))))

  (:action charge_lookup_api
    :parameters (?c - call ?date - var ?amount - var ?out - var)
    :precondition (and (wants_charge_lookup ?c) (arg1 ?c ?date) (arg2 ?c ?amount) (output ?c ?out)
                       (has_type ?date charge_date) (has_type ?amount charge_amount)
                       (has_value ?date) (has_value ?amount))
    :effect (and (done ?c) (has_value ?out) (not (wants_charge_lookup ?c))))

  (:action help_api
    :parameters (?c - call ?topic - var ?out - var)
    :precondition (and (wants_help ?c) (arg1 ?c ?topic) (output ?c ?out)
                       (has_type ?topic help_topic) (has_value ?topic))
    :effect (and (done ?c) (has_value ?out) (not (wants_help ?c))))

  (:action contact_us_api
    :parameters (?c - call ?topic - var ?channel - var ?out - var)
    :precondition (and (wants_contact_us ?c) (arg1 ?c ?topic) (arg2 ?c ?channel) (output ?c ?out)
                       (has_type ?topic contact_topic) (has_type ?channel contact_channel)
                       (has_value ?topic) (has_value ?channel))
    :effect (and (done ?c) (has_value ?out) (not (wants_contact_us ?c))))

  (:action advice_api
    :parameters (?c - call ?out - var)
    :precondition (and (wants_advice ?c) (output ?c ?out))
    :effect (and (done ?c) (has_value ?out) (not (wants_advice ?c))))

  (:action create_invoice_api
    :parameters (?c - call ?amount - var ?detail - var ?out - var)
    :precondition (and (wants_create_invoice ?c) (arg1 ?c ?amount) (arg2 ?c ?detail) (output ?c ?out)
                       (has_type ?amount invoice_amount) (has_type ?detail invoice_detail)
                       (has_value ?amount) (has_value ?detail))
    :effect (and (done ?c) (has_value ?out) (not (wants_create_invoice ?c))))

  (:action update_customer_api
    :parameters (?c - call ?given - var ?family - var ?email - var ?phone - var ?out - var)
    :precondition (and (wants_update_customer ?c) (arg1 ?c ?given) (arg2 ?c ?family) (arg3 ?c ?email)
                       (arg4 ?c ?phone) (output ?c ?out)
                       (has_type ?given customer_given_name) (has_type ?family customer_family_name)
                       (has_type ?email customer_email) (has_type ?phone customer_phone)
                       (has_value ?given) (has_value ?family) (has_value ?email) (has_value ?phone))
    :effect (and (done ?c) (has_value ?out) (not (wants_update_customer ?c))))
)
